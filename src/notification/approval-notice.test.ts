import { describe, expect, it } from 'vitest';
import { email } from '../channels/email/index.js';
import { slack } from '../channels/slack/index.js';
import { consoleLink, noticeCall } from './approval-notice.js';

const base = 'https://notify.example.com';
const held = { id: 'ntf_01', via: 'sms', client: '<!channel> & "co"', recipientClasses: ['+14…', '+44…'] };

describe('noticeCall', () => {
  it('builds a Slack notice with the link, and a client name that cannot mention or link', () => {
    const call = noticeCall(slack, { via: 'slack', to: '#approvals', baseUrl: base }, held);
    expect(call).toEqual({
      via: 'slack',
      channel: '#approvals',
      text: `Approval needed: sms send ntf_01 from &lt;!channel&gt; &amp; "co", to +14…, +44…. Approve or decline: <${base}/console/notifications/ntf_01>`,
    });
  });

  it('builds an email notice with the link, the client escaped in its HTML', () => {
    const call = noticeCall(email, { via: 'email', to: 'ops@example.com', baseUrl: base }, { ...held, client: null })!;
    expect(call).toMatchObject({ via: 'email', to: 'ops@example.com', subject: 'Approval needed: sms send ntf_01' });
    expect(call.body_html).toContain('from (no client name), to +14…, +44…');
    expect(call.body_html).toContain(`<a href="${base}/console/notifications/ntf_01">`);
    expect(noticeCall(email, { via: 'email', to: 'o@x.io', baseUrl: base }, held)!.body_html).toContain('&lt;!channel&gt; &amp; &quot;co&quot;');
  });

  it('builds none for a channel without notices, and links with the id encoded', () => {
    expect(noticeCall({}, { via: 'sms', to: '+1415', baseUrl: base }, held)).toBeUndefined();
    expect(consoleLink(base, 'a/b c')).toBe(`${base}/console/notifications/a%2Fb%20c`);
  });
});
