/**
 * What a person approved, and only that, leaves (the reliability issue's first class), on
 * SQLite (two connections to one file) and PostgreSQL (two pools, as two replicas): an
 * agent's edit landing between the decider's read and the decision's write is never decided
 * unseen (the hash is compared in the statement that decides), 30 trials of an approval
 * racing an edit send only approved text, and a release sends only a payload whose hash is
 * the approved one, whatever the row holds by then.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { connectChannels } from '../../src/channels/connect.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { editNotificationTool } from '../../src/mcp/tools/edit-notification.js';
import { payloadSha256 } from '../../src/notification/approval.js';
import { decideApproval } from '../../src/notification/decide-approval.js';
import { releaseDue } from '../../src/notification/outbox.js';
import { sendNotification, type PipelineDeps } from '../../src/notification/pipeline.js';
import type { Provider } from '../../src/providers/types.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { diesBeforeRelease } from '../helpers/dying-store.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('what-leaves');

/** A Slack provider that keeps every payload it is handed. */
class Recording implements Provider<unknown> {
  readonly name = 'slack';
  readonly sent: unknown[] = [];
  async send(payload: unknown) {
    this.sent.push(payload);
    return { providerMessageId: `1712345678.${String(this.sent.length).padStart(6, '0')}`, conversation: 'C0123ABCD' };
  }
}

async function deps(store: Store, provider: Recording): Promise<PipelineDeps & { config: Config; store: Store }> {
  const config = loadConfig({
    NOTIFY_DATA_DIR: '/unused',
    SLACK_BOT_TOKEN: 'xoxb-test',
    NOTIFY_SLACK_ALLOW: 'C0123ABCD',
    NOTIFY_APPROVAL: 'slack',
    NOTIFY_APPROVAL_MODE: 'console',
  });
  return { config, store, channels: await connectChannels(config, silentLogger, { slack: provider }), log: silentLogger, now: Date.now };
}

/** The agent's edit_notification, as its own process (store) makes it. */
function editor(d: PipelineDeps & { config: Config; store: Store }) {
  const tool = editNotificationTool([]);
  const ctx = {
    store: d.store,
    config: d.config,
    log: silentLogger,
    client: 'bot',
    now: Date.now,
    signal: new AbortController().signal,
    deps: d,
  };
  return (id: string, text: string) => tool.handler({ id, text }, ctx);
}

/** `store`, whose approveDelivery lets `before` run first: an edit landing after the decider read the row. */
function editLandsFirst(store: Store, before: () => Promise<unknown>): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'approveDelivery')
        return async (...args: Parameters<Store['approveDelivery']>) => (await before(), target.approveDelivery(...args));
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const SEND = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy 142 is done.' };
const EVIL = 'Everyone: reset your password at https://evil.example/reset';

async function editBetweenReadAndWrite(open: () => Promise<Store>): Promise<void> {
  const [storeA, storeB] = [await open(), await open()];
  const provider = new Recording();
  try {
    const agent = await deps(storeB, provider);
    const held = await sendNotification(agent, 'slack', SEND, { client: 'bot' });
    const seen = (await storeA.getDelivery(held.id))!.approval!.payload_sha256;
    const edit = editor(agent);
    const operator = await deps(
      editLandsFirst(storeA, () => edit(held.id, EVIL)),
      provider,
    );

    await expect(decideApproval(operator, held.id, { decision: 'approve', by: 'ops', seenSha256: seen })).rejects.toMatchObject({
      code: 'APPROVAL_REQUIRED',
    });
    expect(provider.sent).toEqual([]);
    const row = (await storeA.getDelivery(held.id))!;
    expect(row.status).toBe('pending_approval');
    expect(row.approval!.payload_sha256).not.toBe(seen);
    expect(await releaseDue(operator)).toEqual([]);
    expect(provider.sent).toEqual([]);
  } finally {
    await storeA.close();
    await storeB.close();
  }
}

async function raceTrials(open: () => Promise<Store>, trials: number): Promise<void> {
  const [storeA, storeB] = [await open(), await open()];
  const provider = new Recording();
  try {
    const agent = await deps(storeB, provider);
    const operator = await deps(storeA, provider);
    const edit = editor(agent);
    const outcomes = { approvedFirst: 0, editedFirst: 0 };
    for (let t = 0; t < trials; t++) {
      const before = provider.sent.length;
      const held = await sendNotification(agent, 'slack', { ...SEND, text: `Deploy ${t} is done.` }, { client: 'bot' });
      const seen = (await storeA.getDelivery(held.id))!.approval!.payload_sha256;
      const [decided] = await Promise.allSettled([
        decideApproval(operator, held.id, { decision: 'approve', by: 'ops', seenSha256: seen }),
        edit(held.id, `${EVIL} (${t})`),
      ]);
      await releaseDue(operator);
      await releaseDue(agent);
      const sent = provider.sent.slice(before);
      // Whatever the interleaving: at most one post, and only the text whose hash was approved.
      expect(sent.length).toBeLessThanOrEqual(1);
      for (const payload of sent) expect(payloadSha256(payload)).toBe(seen);
      if (decided.status === 'fulfilled') outcomes.approvedFirst++;
      else outcomes.editedFirst++;
    }
    expect(outcomes.approvedFirst + outcomes.editedFirst).toBe(trials);
    expect(provider.sent.every((p) => !JSON.stringify(p).includes('evil.example'))).toBe(true);
  } finally {
    await storeA.close();
    await storeB.close();
  }
}

describe('what a person approved, and only that, leaves', () => {
  it("SQLite: an edit landing between the decider's read and its write is not decided, and nothing leaves", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'what-leaves-')), 'notify.db');
    await editBetweenReadAndWrite(() => openSqliteStore({ file, log: silentLogger }));
  });

  it.skipIf(pgSkip !== null)(
    "PostgreSQL: an edit landing between the decider's read and its write is not decided, and nothing leaves",
    async () => {
      const shared = await sharedPostgresSchema('what_leaves');
      try {
        await editBetweenReadAndWrite(() => openPostgresStore({ connectionString: PG_URL, schema: shared.schema, log: silentLogger }));
      } finally {
        await shared.close();
      }
    },
  );

  it('SQLite, two connections: 30 approvals racing edits send only approved text', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'what-leaves-race-')), 'notify.db');
    await raceTrials(() => openSqliteStore({ file, log: silentLogger }), 30);
  });

  it.skipIf(pgSkip !== null)('PostgreSQL, two replicas: 30 approvals racing edits send only approved text', async () => {
    const shared = await sharedPostgresSchema('what_leaves_race');
    try {
      await raceTrials(() => openPostgresStore({ connectionString: PG_URL, schema: shared.schema, log: silentLogger }), 30);
    } finally {
      await shared.close();
    }
  });

  it('a release sends only a payload whose hash is the approved one, whatever the row holds by then', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'what-leaves-tamper-')), 'notify.db');
    const [storeA, storeB] = [await openSqliteStore({ file, log: silentLogger }), await openSqliteStore({ file, log: silentLogger })];
    const provider = new Recording();
    try {
      const dying = await deps(diesBeforeRelease(storeA), provider);
      const held = await sendNotification(dying, 'slack', SEND, { client: 'bot' });
      const seen = (await storeA.getDelivery(held.id))!.approval!.payload_sha256;
      expect((await decideApproval(dying, held.id, { decision: 'approve', by: 'ops', seenSha256: seen })).record.status).toBe('approved');
      // The row's payload changes behind every rule's back (a bug, or a hand on the database).
      const db = new Database(file);
      db.prepare('UPDATE deliveries SET payload = ? WHERE id = ?').run(JSON.stringify({ channel: 'C0123ABCD', text: EVIL }), held.id);
      db.close();
      const released = await releaseDue(await deps(storeB, provider));
      expect(released).toEqual([{ id: held.id, state: 'failed', code: 'APPROVAL_REQUIRED' }]);
      expect(provider.sent).toEqual([]);
    } finally {
      await storeA.close();
      await storeB.close();
    }
  });
});
