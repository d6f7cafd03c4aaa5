/**
 * Row 3's baseline: the flat tool someone would write by hand, with the same fields and
 * types but a description that states no rules (no limits, formats, or idempotency
 * semantics). What notify-mcp's generated description and schema add is measured against it.
 */
export const HAND_WRITTEN_TOOL = {
  name: 'send_notification',
  description: 'Send a notification by email, SMS or Slack.',
  inputSchema: {
    type: 'object',
    properties: {
      via: { type: 'string', enum: ['email', 'sms', 'slack'] },
      to: { type: 'string', description: 'Recipient' },
      subject: { type: 'string' },
      body_html: { type: 'string' },
      body_text: { type: 'string' },
      reply_to: { type: 'string' },
      body: { type: 'string' },
      channel: { type: 'string' },
      text: { type: 'string' },
      thread: { type: 'string' },
      idempotency_key: { type: 'string' },
    },
    required: ['via'],
  },
};
