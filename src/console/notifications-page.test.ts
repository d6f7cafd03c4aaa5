/** The notification page's attempts: an endpoint column where a failover named its relays, senders or targets, and only there. */
import { describe, expect, it } from 'vitest';
import { delivery } from '../../test/store/contract/fixtures.js';
import { detailBody } from './notifications-page.js';

const T0 = Date.UTC(2026, 11, 6, 12);

describe('notification page: attempts', () => {
  it('names each attempt’s endpoint when a provider named them', () => {
    const r = delivery('ntf_1', T0, {
      status: 'sent',
      attempts: 2,
      attempt_log: [
        { attempt: 1, endpoint: 'relay-a.example:465', outcome: 'transient', vendor_code: 'ECONNREFUSED', latency_ms: 3, at: T0 },
        { attempt: 2, endpoint: 'relay-b.example:465', outcome: 'sent', latency_ms: 40, at: T0 + 3 },
      ],
    });
    const page = detailBody(r, 'csrf').text;
    expect(page).toContain('<th scope="col">Endpoint</th>');
    expect(page).toContain('<td>relay-a.example:465</td><td>transient</td>');
    expect(page).toContain('<td>relay-b.example:465</td><td>sent</td>');
  });

  it('has no endpoint column when no attempt names one (Slack, older records)', () => {
    const r = delivery('ntf_2', T0, {
      status: 'sent',
      attempts: 1,
      attempt_log: [{ attempt: 1, outcome: 'sent', latency_ms: 5, at: T0 }],
    });
    expect(detailBody(r, 'csrf').text).not.toContain('Endpoint');
  });
});
