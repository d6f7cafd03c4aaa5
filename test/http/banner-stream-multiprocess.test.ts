/**
 * The live feed across real processes sharing one store, once on a SQLite file and once on
 * PostgreSQL (a fresh schema; required when DATABASE_URL is set, else skipped with a message):
 * a reader of `notify-mcp --http` sees a show_banner and a dismiss_banner made by another
 * `notify-mcp` process (within 1 s: the hub's poll period, src/banners/hub.test.ts); and SIGTERM ends the stream cleanly and the process exits 0.
 */
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/mcp-cli.js';
import { ChildStdioTransport, cliEnv, tempDataDir } from '../helpers/cli.js';
import { startHttpCli } from '../helpers/http-cli.js';
import { postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';
import { openSse } from '../helpers/sse.js';

const pgSkip = await postgresSkipReason('banner-stream-multiprocess');

type SharedStore = { env: Record<string, string>; close(): Promise<void> };

async function sqliteStore(): Promise<SharedStore> {
  return { env: { NOTIFY_DATA_DIR: tempDataDir() }, close: async () => {} };
}

async function postgresStore(): Promise<SharedStore> {
  const shared = await sharedPostgresSchema('notify_stream');
  return { env: { NOTIFY_DATA_DIR: tempDataDir(), ...shared.env }, close: () => shared.close() };
}

const STORES = [
  { name: 'sharing one SQLite file', open: sqliteStore, skip: null },
  { name: 'sharing PostgreSQL', open: postgresStore, skip: pgSkip },
] as const;

describe('the live feed across processes', () => {
  for (const { name, open, skip } of STORES) {
    it.skipIf(skip !== null)(
      `${name}: another process's show and dismiss reach the stream; SIGTERM ends it${skip ? ` [skipped: ${skip}]` : ''}`,
      async () => {
        assertBuilt();
        const shared = await open();
        const env = cliEnv({ ...shared.env, NOTIFY_LOG_LEVEL: 'info' });
        const server = await startHttpCli(env);
        const writer = new ChildStdioTransport([], env);
        const client = new Client({ name: 'ops-bot', version: '1.0.0' });
        try {
          await client.connect(writer);
          const reader = await openSse(`${server.origin}/banners/stream?audience=all`);
          expect((await reader.nth(0, 5_000)).event).toBe('snapshot');

          const shown = (
            await client.callTool({ name: 'show_banner', arguments: { text: 'Payments degraded', audience: 'all', severity: 'critical' } })
          ).structuredContent as { banner_id: string };
          await reader.nth(1, 10_000);
          expect(reader.data()[1]).toMatchObject({ change: 'shown', banner: { banner_id: shown.banner_id, severity: 'critical' } });

          await client.callTool({ name: 'dismiss_banner', arguments: { banner_id: shown.banner_id } });
          await reader.nth(2, 10_000);
          expect(reader.data()[2]).toMatchObject({ change: 'dismissed', banner: { banner_id: shown.banner_id } });

          const exited = new Promise<number | null>((r) => server.child.once('exit', (code) => r(code)));
          server.child.kill('SIGTERM');
          await reader.until((r) => r.ended, 5_000, 'end of stream');
          expect(reader.response.complete).toBe(true);
          expect(await exited).toBe(0);
        } finally {
          await client.close().catch(() => {});
          if (server.child.exitCode === null) server.child.kill('SIGKILL');
          await shared.close();
        }
      },
      30_000,
    );
  }
});
