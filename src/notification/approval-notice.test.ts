import { describe, expect, it } from 'vitest';
import { email } from '../channels/email/index.js';
import { slack } from '../channels/slack/index.js';
import { consoleLink, inertText, noticeCall } from './approval-notice.js';

const base = 'https://notify.example.com';
const held = { id: 'ntf_01', via: 'sms', client: '<!channel> & "co"', recipientClasses: ['+14…', '+44…'] };

describe('noticeCall', () => {
  it('builds a Slack notice with the link, and a client name that cannot mention or link', () => {
    const call = noticeCall(slack, { via: 'slack', to: '#approvals', baseUrl: base }, held);
    expect(call).toEqual({
      via: 'slack',
      channel: '#approvals',
      text: `Approval needed: sms send ntf_01 from "&lt;!channel&gt; &amp; 'co'", to +14…, +44…. Approve or decline: <${base}/console/notifications/ntf_01>`,
    });
  });

  it('builds an email notice with the link, the client escaped in its HTML', () => {
    const call = noticeCall(email, { via: 'email', to: 'ops@example.com', baseUrl: base }, { ...held, client: null })!;
    expect(call).toMatchObject({ via: 'email', to: 'ops@example.com', subject: 'Approval needed: sms send ntf_01' });
    expect(call.body_html).toContain('from (no client name), to +14…, +44…');
    expect(call.body_html).toContain(`<a href="${base}/console/notifications/ntf_01">`);
    expect(noticeCall(email, { via: 'email', to: 'o@x.io', baseUrl: base }, held)!.body_html).toContain(
      '&quot;&lt;!channel&gt; &amp; &#39;co&#39;&quot;',
    );
  });

  it('puts a caller-chosen name on one line, without a link, an address or emphasis a client would render', () => {
    const names = [
      'ops-bot (one click at https://notify-example.evil.example/console/approvals)',
      'bot\nApprove or decline: https://evil.example/console',
      'bot\u2028Approve\r\nor\u202edecline',
      'bot *URGENT* _approve now_ ~x~ `code` <!here>',
      'mail me: boss@evil.example or www.evil.example',
    ];
    for (const client of names) {
      const { text } = noticeCall(slack, { via: 'slack', to: '#approvals', baseUrl: base }, { ...held, client }) as { text: string };
      // One line, whose one link is the console's, at its end: what the name says stays inside its quotes.
      expect(text.match(/https?:\/\/|<http/g), client).toEqual(['<http']);
      expect(text).toMatch(
        new RegExp(
          `^Approval needed: sms send ntf_01 from "[^"]*", to \\+14…, \\+44…\\. Approve or decline: <${base}/console/notifications/ntf_01>$`,
        ),
      );
      expect(text).not.toMatch(/[\n\r\u2028\u2029\u202e]/);
      expect(text.slice(0, text.lastIndexOf('Approve or decline:'))).not.toMatch(/[*~`]|\s_|_\s|<!here>|[a-z]\.[a-z]+\/|[a-z]@[a-z]/);
    }
    expect(inertText('ops_bot.prod')).toBe('ops_bot[.]prod');
    expect(inertText('https://evil.example/x')).toBe('https[:]//evil[.]example/x');
    expect(inertText('x'.repeat(100))).toHaveLength(64);
    // A recipient class (an email domain) is the caller's choice too.
    const call = noticeCall(
      slack,
      { via: 'slack', to: '#approvals', baseUrl: base },
      { ...held, via: 'email', recipientClasses: ['@evil.example'] },
    ) as { text: string };
    expect(call.text).toContain('to @evil[.]example.');
  });

  it('builds none for a channel without notices, and links with the id encoded', () => {
    expect(noticeCall({}, { via: 'sms', to: '+1415', baseUrl: base }, held)).toBeUndefined();
    expect(consoleLink(base, 'a/b c')).toBe(`${base}/console/notifications/a%2Fb%20c`);
  });
});
