/**
 * `notify-mcp audit verify` and `audit export` over the built CLI: sends made through the
 * server (stdio, and two HTTP replicas sharing PostgreSQL with 50 clients) leave a chain that
 * verifies; a tampered SQLite file or PostgreSQL table exits 1 naming the entry; export
 * filters by time and client, and ends quietly into a reader that stops early.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { CLI, cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { startHttpCli } from '../helpers/http-cli.js';
import { connectCli, eraClient } from '../helpers/mcp-cli.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('audit-cli');
const SMS = (i: number) => ({ via: 'sms', to: '+14155550100', body: `Deploy ${i} is live.` });

describe('notify-mcp audit on SQLite', () => {
  it('verifies what the server wrote, names a tampered entry, and exports by time and client', async () => {
    const dataDir = tempDataDir('notify-audit-cli-');
    const env = cliEnv({ NOTIFY_DATA_DIR: dataDir });
    for (const name of ['alpha', 'beta']) {
      const s = await connectCli(env, name);
      try {
        for (let i = 0; i < 3; i++) expect((await s.client.callTool({ name: 'send_notification', arguments: SMS(i) })).isError).toBeFalsy();
      } finally {
        await s.close();
      }
    }
    const ok = await runCli(['audit', 'verify'], env);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^audit chain intact: 6 entries \(seq 1\.\.6\), head [0-9a-f]{64}\n$/);

    const all = (await runCli(['audit', 'export'], env)).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(all).toHaveLength(6);
    expect(all[0]).toMatchObject({ seq: 1, client: 'alpha', tool: 'send_notification', kind: 'outcome.dry_run', recipients: ['+14…'] });
    expect(JSON.stringify(all)).not.toContain('+14155550100');
    expect(JSON.stringify(all)).not.toContain('Deploy');
    const beta = (await runCli(['audit', 'export', '--client', 'beta'], env)).stdout.trim().split('\n');
    expect(beta.map((l) => JSON.parse(l).client)).toEqual(['beta', 'beta', 'beta']);
    const since = all[4].at as string;
    expect((await runCli(['audit', 'export', '--since', since], env)).stdout.trim().split('\n').length).toBeGreaterThanOrEqual(2);
    expect((await runCli(['audit', 'export', '--since', '2999-01-01'], env)).stdout).toBe('');
    const bad = await runCli(['audit', 'export', '--since', 'yesterday'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since must be an RFC 3339 time or a date');
    expect((await runCli(['audit', 'rewrite'], env)).code).toBe(2);

    const db = new Database(join(dataDir, 'notify.db'));
    try {
      db.prepare("UPDATE audit_log SET client = 'mallory' WHERE seq = 4").run();
      const changed = await runCli(['audit', 'verify'], env);
      expect(changed.code).toBe(1);
      expect(changed.stdout).toContain('audit chain broken at entry 4 (changed)');
      db.prepare("UPDATE audit_log SET client = 'beta' WHERE seq = 4").run();
      expect((await runCli(['audit', 'verify'], env)).code).toBe(0);
      db.prepare('DELETE FROM audit_log WHERE seq = 2').run();
      const removed = await runCli(['audit', 'verify', '--json'], env);
      expect(removed.code).toBe(1);
      expect(JSON.parse(removed.stdout)).toMatchObject({ ok: false, seq: 2, problem: 'removed', count: 1 });
    } finally {
      db.close();
    }
  });

  it('a scheduled send and its retract are on the chain: export shows both, verify passes', async () => {
    const dataDir = tempDataDir('notify-audit-outbox-');
    const env = cliEnv({ NOTIFY_DATA_DIR: dataDir });
    const s = await connectCli(env, 'planner');
    try {
      const sendAt = new Date(Date.now() + 3_600_000).toISOString();
      const scheduled = await s.client.callTool({ name: 'send_notification', arguments: { ...SMS(1), send_at: sendAt } });
      const id = (scheduled.structuredContent as { id: string; status: string }).id;
      expect(scheduled.structuredContent).toMatchObject({ status: 'scheduled' });
      expect((await s.client.callTool({ name: 'retract_notification', arguments: { id } })).structuredContent).toMatchObject({
        status: 'cancelled',
      });
      expect((await runCli(['audit', 'verify'], env)).code).toBe(0);
      const all = (await runCli(['audit', 'export'], env)).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(all.map((e) => [e.notification_id, e.kind, e.client, e.tool])).toEqual([
        [id, 'outbox.scheduled', 'planner', 'send_notification'],
        [id, 'outbox.cancelled', 'planner', 'retract_notification'],
      ]);
      expect(all[0].recipients).toEqual(['+14…']);
      expect(JSON.stringify(all)).not.toContain('+14155550100');
    } finally {
      await s.close();
    }
  });

  it('export into a reader that stops early (| head) ends quietly, exit 0, no EPIPE stack', async () => {
    const dataDir = tempDataDir('notify-audit-pipe-');
    const env = cliEnv({ NOTIFY_DATA_DIR: dataDir });
    const calls =
      Array.from({ length: 300 }, (_, i) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: i + 1,
          method: 'tools/call',
          params: {
            name: 'send_notification',
            arguments: SMS(i),
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
          },
        }),
      ).join('\n') + '\n';
    const served = spawn(process.execPath, [CLI], { env, stdio: ['pipe', 'ignore', 'ignore'] });
    served.stdin.end(calls);
    await once(served, 'exit');
    const exported = spawn(process.execPath, [CLI, 'audit', 'export'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    exported.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const [first] = (await once(exported.stdout, 'data')) as [Buffer];
    expect(first.toString()).toMatch(/^\{"seq":1,/);
    exported.stdout.destroy();
    const [code] = (await once(exported, 'exit')) as [number];
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(code).toBe(0);
  });
});

describe.skipIf(pgSkip !== null)('notify-mcp audit on PostgreSQL', () => {
  it('two replicas, 50 concurrent clients: one chain that verifies; a tampered table exits 1', async () => {
    const schema = await sharedPostgresSchema('audit_cli');
    const env = cliEnv({ ...schema.env, NOTIFY_DATA_DIR: tempDataDir('notify-audit-pg-') });
    const replicas = await Promise.all([startHttpCli(env), startHttpCli(env)]);
    try {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const client = eraClient(`client-${i}`, i % 2 === 0 ? 'modern' : 'legacy');
          await client.connect(new StreamableHTTPClientTransport(new URL(replicas[i % 2]!.url)));
          try {
            const r = await client.callTool({ name: 'send_notification', arguments: SMS(i) });
            expect(r.isError).toBeFalsy();
          } finally {
            await client.close();
          }
        }),
      );
      const ok = await runCli(['audit', 'verify', '--json'], env);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, count: 50, head: { seq: 50 } });
      const exported = (await runCli(['audit', 'export'], env)).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(new Set(exported.map((e) => e.client)).size).toBe(50);
      const one = (await runCli(['audit', 'export', '--client', 'client-7', '--since', '2020-01-01'], env)).stdout.trim().split('\n');
      expect(one.map((l) => JSON.parse(l).client)).toEqual(['client-7']);

      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query(`UPDATE ${schema.schema}.audit_log SET seq = -1 WHERE seq = 20`);
        await admin.query(`UPDATE ${schema.schema}.audit_log SET seq = 20 WHERE seq = 21`);
        await admin.query(`UPDATE ${schema.schema}.audit_log SET seq = 21 WHERE seq = -1`);
        const swapped = await runCli(['audit', 'verify'], env);
        expect(swapped.code).toBe(1);
        expect(swapped.stdout).toContain('audit chain broken at entry 20 (reordered)');
      } finally {
        await admin.end();
      }
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      await schema.close();
    }
  });
});
