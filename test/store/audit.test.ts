/**
 * The audit chain on both engines (DESIGN section 10): written with the writes it describes,
 * no address or body in clear, and every kind of tampering, done directly in the SQLite file
 * and the PostgreSQL table, named by verification; pruning keeps the rest verifiable; on
 * PostgreSQL, 50 concurrent writers on two replicas make one chain, without a fork.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { anchorDigest, digestOf, entryHash, GENESIS } from '../../src/store/audit.js';
import { verifyAudit } from '../../src/store/audit-verify.js';
import type { AuditEntry, Store } from '../../src/store/types.js';
import { ENGINES, entries, postgresEngine, record, T0, unavailable, type Engine, type Raw } from './audit-engines.js';

/** Ten records (one entry each), a receipt and an approval answer: 12 entries. */
async function seed(store: Store): Promise<void> {
  for (let i = 1; i <= 10; i++) {
    await store.writeRecord(record(`ntf_${i}`, T0 + i * 1000), {
      audit: { tool: 'send_notification', recipients: ['@example.com', '@evil.example', '@example.com'] },
    });
  }
  const moved = await store.updateDeliveryStatus('ntf_1', {
    from: 'dry_run',
    status: 'delivered',
    provider_status: 'delivered',
    provider_status_code: null,
    at: T0 + 20_000,
  });
  expect(moved).toBe(true);
  await store.answerApproval('q1', 'accept', T0 + 21_000, 60_000);
}

const rehash = (e: AuditEntry) => entryHash(e);

describe.each(ENGINES)('audit chain on %s', (name, open, skip) => {
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  const start = async () => {
    engine = await open();
    await seed(engine.store);
    return engine;
  };

  it.skipIf(skip)('appends an entry per write, in the same transaction, with digests and recipient classes only', async () => {
    const { store } = await start();
    const all = await entries(store);
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(all[0]).toMatchObject({
      client: 'ops-bot',
      tool: 'send_notification',
      notification_id: 'ntf_1',
      kind: 'outcome.dry_run',
      prev: GENESIS,
      recipients: ['@evil.example', '@example.com'],
    });
    expect(all[10]).toMatchObject({ notification_id: 'ntf_1', kind: 'receipt.delivered' });
    expect(all[11]).toMatchObject({ kind: 'answer.accept' });
    for (let i = 1; i < all.length; i++) expect(all[i]!.prev).toBe(all[i - 1]!.hash);
    const text = JSON.stringify(all);
    for (const clear of ['alice', 'hidden-bcc', 'secret plans', 'the body']) expect(text).not.toContain(clear);
    // A live send's request digest covers the exact payload, envelope (bcc) included.
    const sent = record('ntf_live', T0 + 30_000, { status: 'sent', provider: 'smtp', attempts: 1 });
    await store.writeRecord(sent, { audit: { tool: 'send_email' } });
    const request = (await entries(store)).find((e) => e.notification_id === 'ntf_live' && e.kind === 'request')!;
    expect(request.digest).toBe(digestOf(sent.payload));
    expect(request.digest).not.toBe(
      digestOf({ ...(sent.payload as object), envelope: { from: 'ops@example.com', to: ['alice@example.com'] } }),
    );
    // A write that does not happen appends nothing: a lost claim, a receipt the table refuses.
    expect(await store.writeRecord(record('ntf_lost', T0), { claim: { key: 'k', owner: 'nobody', result: null } })).toEqual({
      kind: 'claim_lost',
    });
    expect(
      await store.updateDeliveryStatus('ntf_1', {
        from: 'dry_run',
        status: 'sent',
        provider_status: 'x',
        provider_status_code: null,
        at: T0,
      }),
    ).toBe(false);
    expect(await verifyAudit(store)).toMatchObject({ ok: true, count: 14 });
    // One notification's entries (the console's view), and one client's from a time on.
    const one = await store.auditEntries({ afterSeq: 0, limit: 100, notificationId: 'ntf_1' });
    expect(one.map((e) => e.kind)).toEqual(['outcome.dry_run', 'receipt.delivered']);
    const later = await store.auditEntries({ afterSeq: 0, limit: 100, client: 'ops-bot', since: T0 + 9_000 });
    expect(later.map((e) => [e.notification_id, e.kind])).toEqual([
      ['ntf_9', 'outcome.dry_run'],
      ['ntf_10', 'outcome.dry_run'],
      ['ntf_live', 'request'],
      ['ntf_live', 'outcome.sent'],
    ]);
  });

  it.skipIf(skip)('appends a request entry per attempt, each with its own digest, and the chain verifies over them', async () => {
    const { store, raw } = await start();
    // Two relays handed the same bytes (no digest of their own: the payload's), then a fallback handed its own request.
    const own = 'b'.repeat(64);
    const sent = record('ntf_failover', T0 + 30_000, {
      status: 'sent',
      provider: 'smtp',
      attempts: 3,
      attempt_log: [
        { attempt: 1, endpoint: 'a.example:465', outcome: 'transient', vendor_code: 'ECONNREFUSED', latency_ms: 2 },
        { attempt: 2, endpoint: 'b.example:587', outcome: 'transient', vendor_code: 421, latency_ms: 3 },
        { attempt: 3, endpoint: 'c', digest: own, outcome: 'sent', latency_ms: 4 },
      ],
    });
    await store.writeRecord(sent, { audit: { tool: 'send_email' } });
    const mine = await store.auditFor('ntf_failover');
    expect(mine.map((e) => [e.kind, e.digest])).toEqual([
      ['request', digestOf(sent.payload)],
      ['request', digestOf(sent.payload)],
      ['request', own],
      ['outcome.sent', expect.any(String)],
    ]);
    expect((await store.getDelivery('ntf_failover'))!.attempt_log).toEqual(sent.attempt_log);
    expect(await verifyAudit(store, 5)).toMatchObject({ ok: true, count: 16 });
    // The second attempt's entry changed (its digest made the first's) is named like any entry.
    const second = mine[1]!.seq;
    await raw.run(`UPDATE audit_log SET digest = '${own}' WHERE seq = ${second}`);
    expect(await verifyAudit(store, 5)).toMatchObject({ ok: false, seq: second, problem: 'changed' });
  });

  it.skipIf(skip)('verifies an untouched chain, with the count and the head', async () => {
    const { store } = await start();
    const v = await verifyAudit(store, 5);
    expect(v).toMatchObject({ ok: true, count: 12, head: { seq: 12, anchor_seq: 0 } });
    // The engine's lines hash as entryHash does (an address with a quote and non-ASCII text too),
    // so an intact chain never needs the entry-by-entry read.
    await store.writeRecord(record('ntf_"odd" é ☃', T0 + 50_000, { client: 'bot "q" \\ \u0001 ü' }), {
      audit: { tool: 'x\ny', recipients: ['@é.example'] },
    });
    let byEntry = 0;
    const counted = {
      auditHead: () => store.auditHead(),
      auditLines: (a: number, l: number) => store.auditLines(a, l),
      auditEntries: (q: Parameters<Store['auditEntries']>[0]) => (byEntry++, store.auditEntries(q)),
    };
    expect(await verifyAudit(counted, 5)).toMatchObject({ ok: true, count: 13 });
    expect(byEntry).toBe(0);
  });

  const tamperings: [string, (raw: Raw, all: AuditEntry[]) => Promise<void>, { seq: number; problem: string }][] = [
    ['a field changed', (raw) => raw.run(`UPDATE audit_log SET client = 'mallory' WHERE seq = 5`), { seq: 5, problem: 'changed' }],
    [
      'a field changed and its hash recomputed',
      async (raw, all) => {
        const e = { ...all[4]!, kind: 'outcome.failed' };
        await raw.run('UPDATE audit_log SET kind = $1, hash = $2 WHERE seq = 5', [e.kind, rehash(e)]);
      },
      { seq: 5, problem: 'changed' },
    ],
    [
      'the last entry changed',
      (raw) => raw.run(`UPDATE audit_log SET digest = '${'f'.repeat(64)}' WHERE seq = 12`),
      { seq: 12, problem: 'changed' },
    ],
    ['an entry removed', (raw) => raw.run('DELETE FROM audit_log WHERE seq = 5'), { seq: 5, problem: 'removed' }],
    [
      'an entry removed and the rest renumbered',
      async (raw) => {
        await raw.run('DELETE FROM audit_log WHERE seq = 5');
        for (let s = 6; s <= 12; s++) await raw.run('UPDATE audit_log SET seq = $1 WHERE seq = $2', [s - 1, s]);
        await raw.run('UPDATE audit_head SET seq = 11');
      },
      { seq: 5, problem: 'removed' },
    ],
    ['the last entry removed', (raw) => raw.run('DELETE FROM audit_log WHERE seq = 12'), { seq: 12, problem: 'removed' }],
    [
      'an entry inserted, linked and hashed, the rest shifted',
      async (raw, all) => {
        for (let s = 12; s >= 5; s--) await raw.run('UPDATE audit_log SET seq = $1 WHERE seq = $2', [s + 1, s]);
        const forged = { ...all[4]!, seq: 5, notification_id: 'ntf_forged', prev: all[3]!.hash };
        await insert(raw, { ...forged, hash: rehash(forged) });
        await raw.run('UPDATE audit_head SET seq = 13');
      },
      { seq: 5, problem: 'inserted' },
    ],
    [
      'an entry appended past the head',
      async (raw, all) => {
        const forged = { ...all[11]!, seq: 13, prev: all[11]!.hash };
        await insert(raw, { ...forged, hash: rehash(forged) });
      },
      { seq: 13, problem: 'inserted' },
    ],
    [
      'an entry put before the anchor',
      async (raw, all) => {
        const forged = { ...all[0]!, seq: 0 };
        await insert(raw, { ...forged, hash: rehash(forged) });
      },
      { seq: 0, problem: 'inserted' },
    ],
    [
      'two entries swapped',
      async (raw) => {
        await raw.run('UPDATE audit_log SET seq = -1 WHERE seq = 5');
        await raw.run('UPDATE audit_log SET seq = 5 WHERE seq = 6');
        await raw.run('UPDATE audit_log SET seq = 6 WHERE seq = -1');
      },
      { seq: 5, problem: 'reordered' },
    ],
    [
      'two entries swapped across a page boundary',
      async (raw) => {
        await raw.run('UPDATE audit_log SET seq = -1 WHERE seq = 4');
        await raw.run('UPDATE audit_log SET seq = 4 WHERE seq = 5');
        await raw.run('UPDATE audit_log SET seq = 5 WHERE seq = -1');
      },
      { seq: 4, problem: 'reordered' },
    ],
  ];

  it.skipIf(skip).each(tamperings)('names %s', async (_what, tamper, expected) => {
    const { store, raw } = await start();
    await tamper(raw, await entries(store));
    const v = await verifyAudit(store, 4);
    expect(v).toMatchObject({ ok: false, ...expected });
  });

  it.skipIf(skip)('prunes a prefix and keeps the rest verifiable from the anchor, tampering still named', async () => {
    const { store, raw } = await start();
    const all = await entries(store);
    const before = await store.auditHead();
    // Entries 1-5 are older than T0 + 5.5 s; the prune's own entry (13) names the anchor it left.
    expect(await store.pruneAudit(T0 + 5_500, T0 + 30_000)).toBe(5);
    const head = await store.auditHead();
    expect(head).toMatchObject({ seq: 13, anchor_seq: 5, anchor_hash: all[4]!.hash });
    expect(head.hash).not.toBe(before.hash);
    expect((await entries(store)).at(-1)).toMatchObject({
      seq: 13,
      kind: 'pruned',
      digest: anchorDigest(5, all[4]!.hash),
      client: null,
      notification_id: null,
    });
    expect(await verifyAudit(store)).toMatchObject({ ok: true, count: 8 });
    expect(await verifyAudit(store, 3)).toMatchObject({ ok: true, count: 8 });
    expect(await store.pruneAudit(T0 + 5_500, T0 + 31_000)).toBe(0);
    await store.writeRecord(record('ntf_after', T0 + 40_000));
    expect(await verifyAudit(store)).toMatchObject({ ok: true, count: 9 });
    // A second prune names its own anchor; the first's entry is among those it removes.
    expect(await store.pruneAudit(T0 + 35_000, T0 + 41_000)).toBe(8);
    expect(await verifyAudit(store)).toMatchObject({ ok: true, count: 2 });
    await raw.run('DELETE FROM audit_log WHERE seq = 14');
    expect(await verifyAudit(store)).toMatchObject({ ok: false, seq: 14, problem: 'removed' });
  });

  it.skipIf(skip)(
    'names the oldest entries deleted and the anchor moved by hand, the head hash unchanged, with or without an earlier prune',
    async () => {
      const { store, raw } = await start();
      const all = await entries(store);
      const head = await store.auditHead();
      // What a1 did: delete 1-4, and move the anchor to entry 5's own prev.
      await raw.run('DELETE FROM audit_log WHERE seq <= 4');
      await raw.run('UPDATE audit_head SET anchor_seq = $1, anchor_hash = $2', [4, all[4]!.prev]);
      expect((await store.auditHead()).hash).toBe(head.hash);
      for (const size of [10_000, 3]) expect(await verifyAudit(store, size)).toMatchObject({ ok: false, seq: 4, problem: 'removed' });
    },
  );

  it.skipIf(skip)('names an anchor moved by hand past a real prune', async () => {
    const { store, raw } = await start();
    expect(await store.pruneAudit(T0 + 3_500, T0 + 30_000)).toBe(3);
    const all = await entries(store);
    expect(await verifyAudit(store)).toMatchObject({ ok: true });
    await raw.run('DELETE FROM audit_log WHERE seq <= 6');
    await raw.run('UPDATE audit_head SET anchor_seq = $1, anchor_hash = $2', [6, all.find((e) => e.seq === 7)!.prev]);
    for (const size of [10_000, 3]) expect(await verifyAudit(store, size)).toMatchObject({ ok: false, seq: 6, problem: 'removed' });
  });
});

async function insert(raw: Raw, e: AuditEntry): Promise<void> {
  await raw.run(
    'INSERT INTO audit_log (seq, at, client, tool, notification_id, kind, digest, recipients, prev, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    [
      e.seq,
      e.at,
      e.client,
      e.tool,
      e.notification_id,
      e.kind,
      e.digest,
      e.recipients === null ? null : JSON.stringify(e.recipients),
      e.prev,
      e.hash,
    ],
  );
}

describe.skipIf(unavailable !== null)('audit chain across PostgreSQL replicas', () => {
  it('makes one chain of 50 concurrent writers on two replicas: no fork, no gap', async () => {
    const engine = await postgresEngine();
    try {
      const replicas = [engine.store, await engine.second()];
      const writes = Array.from({ length: 50 }, async (_, i) => {
        const store = replicas[i % 2]!;
        const id = `ntf_c${i}`;
        await store.writeRecord(record(id, T0 + i, { client: `client-${i}` }), { audit: { tool: 'send_notification' } });
        // And a receipt racing the other writers.
        await store.updateDeliveryStatus(id, {
          from: 'dry_run',
          status: 'delivered',
          provider_status: 'delivered',
          provider_status_code: null,
          at: T0 + 100 + i,
        });
      });
      await Promise.all(writes);
      const all = await entries(engine.store);
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      expect(new Set(all.map((e) => e.prev)).size).toBe(100);
      expect(new Set(all.map((e) => e.client).filter(Boolean)).size).toBe(50);
      for (const replica of replicas) expect(await verifyAudit(replica)).toMatchObject({ ok: true, count: 100 });
    } finally {
      await engine.close();
    }
  });
});
