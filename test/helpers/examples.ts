/** Valid calls for every branch, used by the schema, validator and e2e suites. */
export const VALID_EXAMPLES: Record<'email' | 'sms' | 'slack', Record<string, unknown>[]> = {
  email: [
    { via: 'email', to: 'ops@example.com', subject: 'Deploy done', body_html: '<p>Deployed <b>v1.2</b></p>' },
    {
      via: 'email',
      to: ['a@example.com', 'b@example.org'],
      subject: 'x'.repeat(255),
      body_html: '<p>hi</p>',
      body_text: 'hi',
      reply_to: 'noreply@example.com',
      idempotency_key: 'deploy-42',
    },
  ],
  sms: [
    { via: 'sms', to: '+14155550123', body: 'Server down' },
    { via: 'sms', to: '+447911123456', body: 'a'.repeat(160), idempotency_key: 'k' },
    { via: 'sms', to: '+819012345678', body: 'é'.repeat(160) },
    { via: 'sms', to: '+79001234567', body: 'я'.repeat(70) },
    { via: 'sms', to: '+14155550123', body: 'ok 😀' },
  ],
  slack: [
    { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished' },
    { via: 'slack', channel: '#ops-alerts', text: 'x'.repeat(40_000), thread: '1712345678.123456', idempotency_key: 'k'.repeat(128) },
  ],
};

export const ALL_VALID = Object.values(VALID_EXAMPLES).flat();
