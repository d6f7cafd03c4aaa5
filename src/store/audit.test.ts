/** The audit's digests are a contract (docs/audit.md): the fast paths must hash the very bytes the definitions say. */
import { describe, expect, it } from 'vitest';
import { canonicalJson, chain, digestOf, entryHash, GENESIS, recordEntries } from './audit.js';
import type { DeliveryRecord } from './types.js';

/** The definition, written the plain way: keys sorted at every depth, undefined members left out. */
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(obj[k])}`).join(',')}}`;
}

const record = (over: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  id: 'ntf_1',
  via: 'sms',
  status: 'dry_run',
  provider: 'dry-run',
  provider_message_id: null,
  payload: { to: '+14155550123', body: 'Server down' },
  error_code: null,
  attempts: 0,
  attempt_log: [],
  latency_ms: 1,
  client: 'bot',
  idempotency_key: null,
  created_at: 1000,
  provider_status: null,
  provider_status_code: null,
  status_updated_at: 1001,
  approval: null,
  ...over,
});

describe('audit digests', () => {
  it('canonicalJson gives the bytes of the definition', () => {
    const values: unknown[] = [
      null,
      0,
      -1.5,
      NaN,
      'a"b',
      true,
      undefined,
      [],
      {},
      [undefined, null, 1, () => 1],
      { b: 1, a: [{ d: undefined, c: 'x' }], é: 'é', 10: 'ten', 2: 'two' },
      { nested: { z: { y: { x: [1, { w: null }] } } }, undefinedMember: undefined, fn: () => 1 },
      { to: '+14155550123', body: 'Server down', media_urls: ['https://a.example/x.png'] },
    ];
    for (const v of values) expect(canonicalJson(v)).toBe(reference(v));
  });

  it('an outcome entry digests { status, provider, provider_message_id, error_code, attempts, payload } as canonical JSON', () => {
    const cases: Partial<DeliveryRecord>[] = [
      {},
      { status: 'sent', provider: 'twilio', provider_message_id: 'SM1', attempts: 2 },
      { status: 'failed', error_code: 'PROVIDER_REJECTED', attempts: 1 },
      // A hand-made record with members missing or odd.
      { provider_message_id: undefined as unknown as null, error_code: { nested: true } as unknown as string },
    ];
    for (const c of cases) {
      const r = record(c);
      const outcome = recordEntries(r, { tool: 'send_notification', recipients: ['+14…'] }).at(-1)!;
      const payload = digestOf(r.payload);
      expect(outcome.digest).toBe(
        digestOf({
          status: r.status,
          provider: r.provider,
          provider_message_id: r.provider_message_id,
          error_code: r.error_code,
          attempts: r.attempts,
          payload,
        }),
      );
      expect(outcome).toMatchObject({
        kind: `outcome.${r.status}`,
        at: r.status_updated_at,
        client: 'bot',
        tool: 'send_notification',
        notification_id: 'ntf_1',
        recipients: ['+14…'],
      });
    }
  });

  it('recipient classes are each said once, sorted', () => {
    const [one] = recordEntries(record(), { tool: null, recipients: ['@b.example', '@a.example', '@b.example'] });
    expect(one!.recipients).toEqual(['@a.example', '@b.example']);
    expect(recordEntries(record(), { tool: null, recipients: [] })[0]!.recipients).toEqual([]);
    expect(recordEntries(record(), undefined)[0]!.recipients).toBeNull();
  });

  it('chain links each entry to the one before and hashes every field but its own hash', () => {
    const inputs = recordEntries(record({ attempts: 1, status: 'sent' }), { tool: 'send_notification', recipients: ['+14…'] });
    const { entries, head } = chain({ seq: 4, hash: GENESIS }, inputs);
    expect(entries.map((e) => [e.seq, e.kind])).toEqual([
      [5, 'request'],
      [6, 'outcome.sent'],
    ]);
    expect(entries[0]!.prev).toBe(GENESIS);
    expect(entries[1]!.prev).toBe(entries[0]!.hash);
    for (const e of entries) expect(e.hash).toBe(entryHash({ ...e }));
    expect(head).toEqual({ seq: 6, hash: entries[1]!.hash });
  });
});
