/**
 * Caps across replicas: two built CLIs (`notify-mcp --http`) on one store, SQLite file and
 * PostgreSQL (a fresh schema; skipped loudly without a server unless DATABASE_URL or CI is
 * set), NOTIFY_CAPS with a cap of N for one token client, 2N sends at once spread over both
 * replicas: exactly N accepted and recorded, the rest CAP_REACHED with resets_at.
 */
import { rmSync } from 'node:fs';
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { ERAS, eraClient, errorOf, readOutbox, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';
import { postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const TOKEN = 'caps-bot-token-0123456789abcdef';
const N = 3;
const servers: HttpCli[] = [];
const clients: Client[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(servers.map((s) => s.stop()));
  for (const c of cleanups) await c();
});

async function connect(url: string, era: Era): Promise<Client> {
  const client = eraClient('caps-bot', era);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
  clients.push(client);
  return client;
}

const pgSkip = await postgresSkipReason('caps-replicas (PostgreSQL)');

const stores: { name: string; skip: boolean; env: () => Promise<Record<string, string>> }[] = [
  {
    name: 'SQLite',
    skip: false,
    async env() {
      const dir = tempDataDir('notify-e2e-caps-');
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      return { NOTIFY_DATA_DIR: dir };
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip !== null,
    async env() {
      const dir = tempDataDir('notify-e2e-caps-pg-');
      const shared = await sharedPostgresSchema('caps_replicas');
      cleanups.push(
        () => shared.close(),
        () => rmSync(dir, { recursive: true, force: true }),
      );
      return { NOTIFY_DATA_DIR: dir, ...shared.env };
    },
  },
];

describe.each(stores)('caps across two replicas on one $name store', (store) => {
  it.skipIf(store.skip).each(ERAS)(
    '%s clients: a cap of N, 2N sends over both replicas: exactly N accepted and recorded, the rest CAP_REACHED',
    async (era) => {
      const env = cliEnv({ ...(await store.env()), NOTIFY_HTTP_TOKENS: `caps-bot:${TOKEN}`, NOTIFY_CAPS: `caps-bot:sms=${N}/hour` });
      const [a, b] = await Promise.all([startHttpCli(env), startHttpCli(env)]);
      servers.push(a!, b!);
      const replicas = await Promise.all([connect(a!.url, era), connect(b!.url, era)]);
      const outcomes = (await Promise.all(
        Array.from({ length: 2 * N }, (_, i) =>
          replicas[i % 2]!.callTool({
            name: 'send_notification',
            arguments: { via: 'sms', to: '+14155550123', body: `capped ${era} ${i}` },
          }),
        ),
      )) as ToolOutcome[];

      const accepted = outcomes.filter((o) => !o.isError);
      const refused = outcomes.filter((o) => o.isError).map((o) => errorOf(o) as { code: string; resets_at?: string });
      expect(accepted.map((o) => (o.structuredContent as { status: string }).status)).toEqual(Array(N).fill('dry_run'));
      expect(refused).toHaveLength(N);
      const hour = Math.ceil((Date.now() + 1) / 3_600_000) * 3_600_000;
      for (const r of refused) {
        expect(r.code).toBe('CAP_REACHED');
        expect([hour, hour - 3_600_000]).toContain(Date.parse(r.resets_at!)); // the hour the sends fell in
      }
      const recorded = (await readOutbox(env)).filter((r) => r.client === 'caps-bot' && r.status === 'dry_run');
      expect(recorded.map((r) => r.id).sort()).toEqual(accepted.map((o) => (o.structuredContent as { id: string }).id).sort());
      await Promise.all([a!.stop(), b!.stop()]);
    },
  );
});
