/**
 * Banners written by calls racing each other, in one process and in two `notify-mcp`
 * processes sharing one store (a SQLite file; PostgreSQL in a fresh schema, required when
 * DATABASE_URL is set): identical show_banner calls with one dedupe_key make one active
 * banner, which exactly one of them created; racing dismissals are answered from the
 * dismissal itself (one "you dismissed it", the others "already dismissed", one time); a
 * dismissal racing the banner's expiry is either a dismissal before expires_at or "expired",
 * never both, and never a dismissal recorded after the banner ended. Then Store.endBanner
 * itself, over two connections to each store.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { bannerRecord } from '../helpers/banner-record.js';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { connectCli, type CliSession, type ToolOutcome } from '../helpers/mcp-cli.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('banner-races');

type Shared = { env: Record<string, string>; close(): Promise<void> };

const STORES = [
  {
    name: 'SQLite file',
    skip: null,
    open: async (): Promise<Shared> => ({ env: { NOTIFY_DATA_DIR: tempDataDir() }, close: async () => {} }),
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    open: async (): Promise<Shared> => {
      const shared = await sharedPostgresSchema('notify_banner_race');
      return { env: { NOTIFY_DATA_DIR: tempDataDir(), ...shared.env }, close: () => shared.close() };
    },
  },
] as const;

type Result = Record<string, any>;

const call = async (s: CliSession, name: string, args: Record<string, unknown>): Promise<{ ok: boolean; value: Result }> => {
  const r = (await s.client.callTool({ name, arguments: args })) as ToolOutcome;
  return { ok: !r.isError, value: r.isError ? (r.structuredContent as { error: Result }).error : r.structuredContent! };
};

/** `n` concurrent calls from each process. */
const burst = (processes: CliSession[], n: number, name: string, args: Record<string, unknown>) =>
  Promise.all(processes.flatMap((p) => Array.from({ length: n }, () => call(p, name, args))));

async function twoProcesses(shared: Shared): Promise<CliSession[]> {
  const env = cliEnv(shared.env);
  // Started one after the other: two first runs migrating one fresh store at once is another matter.
  const a = await connectCli(env, 'ops-a');
  const b = await connectCli(env, 'ops-b');
  return [a, b];
}

describe.each(STORES)('banner races on a $name', ({ name, skip, open }) => {
  it.skipIf(skip !== null)(
    `identical show_banner calls with one dedupe_key make one active banner, in one process and across two${skip ? ` [skipped: ${skip}]` : ''}`,
    async () => {
      const shared = await open();
      const processes = await twoProcesses(shared);
      try {
        for (const [label, who] of [
          ['one process', processes.slice(0, 1)],
          ['two processes', processes],
        ] as const) {
          const audience = `race-${label.replace(' ', '-')}`;
          const answers = await burst(who, 12, 'show_banner', {
            text: 'Payments degraded',
            audience,
            severity: 'critical',
            dedupe_key: 'payments',
          });
          expect(
            answers.every((a) => a.ok),
            JSON.stringify(answers.find((a) => !a.ok)),
          ).toBe(true);
          expect(new Set(answers.map((a) => a.value.banner_id)).size, `${name}, ${label}`).toBe(1);
          expect(
            answers.filter((a) => a.value.deduplicated === false),
            `${name}, ${label}: created by exactly one call`,
          ).toHaveLength(1);
          const listed = await call(processes[0]!, 'list_banners', { audience, status: 'active' });
          expect(listed.value.banners, `${name}, ${label}`).toHaveLength(1);
        }
      } finally {
        for (const p of processes) await p.close();
        await shared.close();
      }
    },
    60_000,
  );

  it.skipIf(skip !== null)(
    `racing dismissals: exactly one dismissed it, the others are told it already was${skip ? ` [skipped: ${skip}]` : ''}`,
    async () => {
      const shared = await open();
      const processes = await twoProcesses(shared);
      try {
        for (let round = 0; round < 3; round++) {
          const shown = await call(processes[0]!, 'show_banner', { text: `Deploy ${round}`, audience: 'dismiss-race' });
          const answers = await burst(processes, 8, 'dismiss_banner', { banner_id: shown.value.banner_id });
          expect(
            answers.every((a) => a.ok && a.value.status === 'dismissed'),
            JSON.stringify(answers.find((a) => !a.ok)),
          ).toBe(true);
          expect(
            answers.filter((a) => a.value.already_dismissed === false),
            `${name}, round ${round}`,
          ).toHaveLength(1);
          expect(new Set(answers.map((a) => a.value.dismissed_at)).size).toBe(1);
        }
      } finally {
        for (const p of processes) await p.close();
        await shared.close();
      }
    },
    60_000,
  );

  it.skipIf(skip !== null)(
    `a dismissal racing expiry is a dismissal before expires_at or "expired", and the record agrees${skip ? ` [skipped: ${skip}]` : ''}`,
    async () => {
      const shared = await open();
      const processes = await twoProcesses(shared);
      try {
        // Far enough ahead that a loaded machine's slow show_banner still lands before it.
        const expiresAt = new Date(Date.now() + 5_000).toISOString();
        const shown = await call(processes[0]!, 'show_banner', { text: 'Short-lived', audience: 'expiry-race', expires_at: expiresAt });
        const id = shown.value.banner_id as string;
        const end = Date.parse(shown.value.expires_at as string);
        // Dismissals from both processes until after the banner's end, most of them near it.
        await new Promise((r) => setTimeout(r, Math.max(0, end - Date.now() - 150)));
        const answers: { ok: boolean; value: Result }[] = [];
        while (Date.now() < end + 200) answers.push(...(await burst(processes, 3, 'dismiss_banner', { banner_id: id })));
        const dismissed = answers.filter((a) => a.ok);
        const refused = answers.filter((a) => !a.ok);
        for (const r of refused) expect(r.value).toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/expired/) });
        expect(dismissed.filter((a) => a.value.already_dismissed === false).length).toBeLessThanOrEqual(1);
        for (const d of dismissed) expect(Date.parse(d.value.dismissed_at as string)).toBeLessThan(end);
        const listed = await call(processes[1]!, 'list_banners', { audience: 'expiry-race' });
        const record = (listed.value.banners as Result[]).find((b) => b.banner_id === id)!;
        // Dismissed by someone: the record says so, at that time; else it simply expired.
        expect(record.status).toBe(dismissed.length > 0 ? 'dismissed' : 'expired');
        if (dismissed.length > 0) expect(record.dismissed_at ?? null).toBe(dismissed[0]!.value.dismissed_at);
      } finally {
        for (const p of processes) await p.close();
        await shared.close();
      }
    },
    60_000,
  );
});

/** Two connections to one store, as two processes hold them. */
const STORE_PAIRS = [
  {
    name: 'SQLite file',
    skip: null,
    open: async (): Promise<{ stores: Store[]; close(): Promise<void> }> => {
      const file = join(tempDataDir(), 'notify.db');
      const stores = [await openSqliteStore({ file, log: silentLogger }), await openSqliteStore({ file, log: silentLogger })];
      return { stores, close: async () => void (await Promise.all(stores.map((x) => x.close()))) };
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    open: async (): Promise<{ stores: Store[]; close(): Promise<void> }> => {
      const schema = `notify_end_banner_${randomBytes(6).toString('hex')}`;
      const first = await openPostgresStore({ connectionString: PG_URL, schema, log: silentLogger });
      const stores = [first, await openPostgresStore({ connectionString: PG_URL, schema, log: silentLogger })];
      return {
        stores,
        async close() {
          await Promise.all(stores.map((x) => x.close()));
          const admin = new pg.Client({ connectionString: PG_URL });
          await admin.connect();
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await admin.end();
        },
      };
    },
  },
] as const;

describe.each(STORE_PAIRS)('Store.endBanner on a $name', ({ skip, open }) => {
  it.skipIf(skip !== null)(
    `dismisses a banner active at now once, whoever races it, and never one past its expires_at${skip ? ` [skipped: ${skip}]` : ''}`,
    async () => {
      const { stores, close } = await open();
      try {
        const t0 = Date.UTC(2026, 5, 1, 12);
        const b = await stores[0]!.insertBanner(bannerRecord(t0, { expires_at: t0 + 1_000 }));
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.endBanner(b.id, t0 + 10 + i)));
        expect(answers.filter((a) => a!.dismissed)).toHaveLength(1);
        const at = answers.find((a) => a!.dismissed)!.banner.dismissed_at;
        for (const a of answers) expect(a!.banner.dismissed_at).toBe(at);

        const late = await stores[0]!.insertBanner(bannerRecord(t0, { expires_at: t0 + 1_000 }));
        // At its expires_at it is expired: nothing to dismiss, and the record stays expired.
        expect(await stores[1]!.endBanner(late.id, t0 + 1_000)).toEqual({ banner: late, dismissed: false });
        expect(await stores[0]!.getBanner(late.id)).toEqual(late);
        expect(await stores[0]!.endBanner('bnr_none', t0)).toBeNull();
      } finally {
        await close();
      }
    },
  );
});
