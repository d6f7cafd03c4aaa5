/**
 * Row 8: `notify-mcp audit verify` over 1,000,000 entries (target under 10 s), on SQLite:
 * the chain is built straight into a store's file (entries linked as the store links them),
 * then verifyAudit reads it page by page (the engine's lines, AuditLines) and rehashes every
 * entry. The baseline is the entry-by-entry verify (every row mapped to an entry object, then
 * hashed: what verify did before the lines, and still does to name a break), in the same run.
 */
import { join } from 'node:path';
import { silentLogger } from '../dist/core/log.js';
import { chain, GENESIS } from '../dist/store/audit.js';
import { verifyAudit } from '../dist/store/audit-verify.js';
import { auditValues } from '../dist/store/sql/audit.js';
import { openSqliteStore } from '../dist/store/sqlite/store.js';
import { tempDir } from './lib/servers.mjs';
import { ratio, summarize } from './lib/stats.mjs';

const T0 = Date.UTC(2026, 11, 1);

function fill(db, count) {
  const insert = db.prepare('INSERT INTO audit_log (seq, at, client, tool, notification_id, kind, digest, recipients, prev, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  let head = { seq: 0, hash: GENESIS };
  const batch = 10_000;
  for (let done = 0; done < count; done += batch) {
    const inputs = Array.from({ length: Math.min(batch, count - done) }, (_, i) => ({
      at: T0 + done + i,
      client: `client-${(done + i) % 50}`,
      tool: 'send_notification',
      notification_id: `ntf_${String(done + i).padStart(26, '0')}`,
      kind: (done + i) % 3 === 0 ? 'request' : 'outcome.sent',
      digest: 'ab'.repeat(32),
      recipients: ['@example.com'],
    }));
    const linked = chain(head, inputs);
    db.transaction(() => {
      for (const e of linked.entries) insert.run(...auditValues(e));
    })();
    head = linked.head;
  }
  db.prepare('UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1').run(head.seq, head.hash);
}

/** The store without its lines: verifyAudit then reads entry by entry. */
const byEntry = (store) => ({ auditHead: () => store.auditHead(), auditEntries: (q) => store.auditEntries(q) });

export async function benchAudit({ runs = 3, entries = 1_000_000 } = {}) {
  const store = await openSqliteStore({ file: join(tempDir(), 'notify.db'), log: silentLogger });
  try {
    const t0 = performance.now();
    fill(store.db, entries);
    const fillMs = performance.now() - t0;
    const a = [];
    const b = [];
    const cpu = [];
    const cpuB = [];
    for (let r = 0; r < runs; r++) {
      const verify = async () => {
        const s = performance.now();
        const c = process.cpuUsage();
        const v = await verifyAudit(store);
        if (!v.ok || v.count !== entries) throw new Error(`the chain did not verify: ${JSON.stringify(v)}`);
        a.push(performance.now() - s);
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
      };
      const read = async () => {
        const s = performance.now();
        const c = process.cpuUsage();
        const v = await verifyAudit(byEntry(store));
        if (!v.ok || v.count !== entries) throw new Error(`the chain did not verify entry by entry: ${JSON.stringify(v)}`);
        b.push(performance.now() - s);
        const used = process.cpuUsage(c);
        cpuB.push((used.user + used.system) / 1000);
      };
      if (r % 2 === 0) await verify().then(read);
      else await read().then(verify);
    }
    const sa = summarize(a);
    const sb = summarize(b);
    return [
      {
        section: '8. Audit',
        name: `audit verify, ${entries.toLocaleString('en')} entries (SQLite)`,
        unit: 'ms',
        better: 'lower',
        value: sa,
        baselineName: 'the entry-by-entry verify (rows mapped to entries, then hashed)',
        baseline: sb,
        ratio: ratio(sa, sb, a, b),
        target: { max: 10_000, absolute: true, text: '< 10 s' },
        note: `${runs} runs, in process (verifyAudit, pages of 10,000), wall time; its CPU time ${(summarize(cpu).median / 1000).toFixed(1)} s (median; the baseline's ${(summarize(cpuB).median / 1000).toFixed(1)} s), which is what a loaded machine stretches; building the chain took ${(fillMs / 1000).toFixed(1)} s`,
      },
    ];
  } finally {
    await store.close();
  }
}
