/**
 * An approval leaves through the durable outbox, on SQLite and PostgreSQL, to a real SMTP
 * peer: the decision and the outbox entry are one store write, so a process that dies after
 * the decision and before its own release (an injected fault: its store refuses the claim)
 * leaves the approved send waiting, and another process on the same store (a second
 * connection, as a replica or `notify-mcp worker` has) sends it exactly once. Passes by
 * either process after that send nothing more.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectChannels } from '../../src/channels/connect.js';
import { loadConfig } from '../../src/config/config.js';
import type { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import type { Config } from '../../src/config/config.js';
import { editNotificationTool } from '../../src/mcp/tools/edit-notification.js';
import { decideApproval } from '../../src/notification/decide-approval.js';
import { editNotification } from '../../src/notification/edit.js';
import { releaseDue } from '../../src/notification/outbox.js';
import { sendNotification, type PipelineDeps } from '../../src/notification/pipeline.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { diesBeforeRelease } from '../helpers/dying-store.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const pgSkip = await postgresSkipReason('approval-release');
let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => smtp?.close());

async function deps(store: Store, env: Record<string, string> = {}): Promise<PipelineDeps & { config: Config }> {
  const config = loadConfig({
    ...env,
    NOTIFY_DATA_DIR: '/unused',
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'notify-mcp <alerts@notify.test>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
    NOTIFY_APPROVAL: 'email',
    NOTIFY_APPROVAL_MODE: 'console',
  });
  return { config, store, channels: await connectChannels(config, silentLogger), log: silentLogger, now: Date.now };
}

async function scenario(open: () => Promise<Store>): Promise<void> {
  const [storeA, storeB] = [await open(), await open()];
  try {
    const dying = await deps(diesBeforeRelease(storeA));
    const subject = `approved ${Math.random().toString(16).slice(2)}`;
    const held = await sendNotification(
      dying,
      'email',
      { via: 'email', to: 'ops@example.com', subject, body_html: '<p>disk full</p>' },
      { client: 'bot' },
    );
    expect(held.status).toBe('pending_approval');
    const sha = (await storeA.getDelivery(held.id))!.approval!.payload_sha256;

    const decided = await decideApproval(dying, held.id, { decision: 'approve', by: 'ops', seenSha256: sha });
    expect(decided).toMatchObject({
      status: 'approved',
      released: undefined,
      record: { status: 'approved', approval: { outcome: 'approved', decided_by: 'ops' } },
    });
    // The decision and the outbox entry were one write: the send waits, due now, under its own id.
    expect(await storeB.getOutboxEntry(held.id)).toMatchObject({ state: 'scheduled', via: 'email', client: 'bot' });
    const mine = () => smtp.received.filter((m) => m.raw.includes(subject));
    expect(mine()).toHaveLength(0);

    const other = await deps(storeB);
    expect(await releaseDue(other)).toEqual([{ id: held.id, state: 'released' }]);
    expect(mine()).toHaveLength(1);
    expect(mine()[0]!.to).toEqual(['ops@example.com']);
    const row = (await storeB.getDelivery(held.id))!;
    expect(row).toMatchObject({ status: 'sent', attempts: 1, approval: { outcome: 'approved' } });
    // Sent exactly the bytes the person approved: the stored MIME.
    expect(mine()[0]!.raw.replace(/\r\n$/, '')).toContain((row.payload as { raw: string }).raw.split('\r\n\r\n')[1]!.slice(0, 40));

    // Later passes, by the revived process or the other, send nothing more.
    expect(await releaseDue(await deps(storeA))).toEqual([]);
    expect(await releaseDue(other)).toEqual([]);
    expect(mine()).toHaveLength(1);
    expect((await storeA.getOutboxEntry(held.id))!.state).toBe('released');
  } finally {
    await storeA.close();
    await storeB.close();
  }
}

/** Approved, its process died before the release; then its sender edits it: asked again, and only the edited text leaves. */
async function editedAfterApproval(open: () => Promise<Store>): Promise<void> {
  const [storeA, storeB] = [await open(), await open()];
  try {
    const dying = await deps(diesBeforeRelease(storeA));
    const subject = `edited ${Math.random().toString(16).slice(2)}`;
    const held = await sendNotification(
      dying,
      'email',
      { via: 'email', to: 'ops@example.com', subject, body_html: '<p>first draft</p>' },
      { client: 'bot' },
    );
    const sha = (await storeA.getDelivery(held.id))!.approval!.payload_sha256;
    expect((await decideApproval(dying, held.id, { decision: 'approve', by: 'ops', seenSha256: sha })).record.status).toBe('approved');

    const other = await deps(storeB);
    // The handler reaches channels through ctx.deps; the list given here only names them in the output schema.
    const tool = editNotificationTool([]);
    const ctx = {
      store: storeB,
      config: other.config,
      log: silentLogger,
      client: 'bot',
      now: Date.now,
      signal: new AbortController().signal,
      deps: other,
    };
    expect(await tool.handler({ id: held.id, text: '<p>second draft</p>' }, ctx)).toMatchObject({
      id: held.id,
      status: 'pending_approval',
    });
    const asked = (await storeB.getDelivery(held.id))!;
    expect(asked).toMatchObject({ status: 'pending_approval', approval: { outcome: 'pending' } });
    expect(asked.approval!.payload_sha256).not.toBe(sha);
    expect((asked.payload as { raw: string }).raw).toContain('second draft');
    expect((await storeB.getOutboxEntry(held.id))!.state).toBe('cancelled');
    const mine = () => smtp.received.filter((m) => m.raw.includes(subject));
    // The approval of the first draft no longer sends anything, and the old hash decides nothing.
    expect(await releaseDue(other)).toEqual([]);
    await expect(decideApproval(other, held.id, { decision: 'approve', by: 'ops', seenSha256: sha })).rejects.toMatchObject({
      code: 'APPROVAL_REQUIRED',
    });
    expect(mine()).toHaveLength(0);
    const again = await decideApproval(other, held.id, { decision: 'approve', by: 'ops', seenSha256: asked.approval!.payload_sha256 });
    expect(again).toMatchObject({ released: { state: 'released' }, record: { status: 'sent' } });
    expect(mine()).toHaveLength(1);
    expect(mine()[0]!.raw).toContain('second draft');
    expect(mine()[0]!.raw).not.toContain('first draft');
  } finally {
    await storeA.close();
    await storeB.close();
  }
}

/** Approved, and its release has claimed it (a provider call under way, or a wait between attempts): an edit is told so, not that it left. */
async function editedWhileReleasing(open: () => Promise<Store>): Promise<void> {
  const store = await open();
  try {
    const dying = await deps(diesBeforeRelease(store));
    const held = await sendNotification(
      dying,
      'email',
      { via: 'email', to: 'ops@example.com', subject: 'releasing', body_html: '<p>draft</p>' },
      { client: 'bot' },
    );
    const sha = (await store.getDelivery(held.id))!.approval!.payload_sha256;
    await decideApproval(dying, held.id, { decision: 'approve', by: 'ops', seenSha256: sha });
    const claim = await store.claimDue(Date.now(), { limit: 1, owner: 'other-replica', leaseMs: 60_000, graceMs: 60_000, id: held.id });
    expect(claim.due.map((e) => e.id)).toEqual([held.id]);
    const err = await editNotification(
      await deps(store),
      { client: 'bot', operator: false, signal: new AbortController().signal },
      held.id,
      { text: '<p>second</p>' },
    ).catch((e: NotifyError) => e);
    expect(err).toMatchObject({ code: 'ALREADY_SENT' });
    expect((err as NotifyError).message).toMatch(/is being released now .* it cannot be edited while it is/);
    expect((await store.getDelivery(held.id))!.status).toBe('approved');
  } finally {
    await store.close();
  }
}

/** `store` as a process sees it while its database is cut for these writes: each throws as a dropped connection does while `down()` says so. */
function cutFor(store: Store, methods: readonly string[], down: () => boolean): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const fn = (value as (...a: unknown[]) => unknown).bind(target);
      if (!methods.includes(prop as string)) return fn;
      return async (...args: unknown[]) => {
        if (down()) throw new StoreUnavailableError('postgres', 'Connection terminated unexpectedly');
        return fn(...args);
      };
    },
  });
}

async function approvedHeld(d: PipelineDeps, store: Store, subject: string): Promise<{ id: string; sha: string }> {
  const held = await sendNotification(
    d,
    'email',
    { via: 'email', to: 'ops@example.com', subject, body_html: '<p>disk full</p>' },
    { client: 'bot' },
  );
  return { id: held.id, sha: (await store.getDelivery(held.id))!.approval!.payload_sha256 };
}

/** The provider took the approved mail, then the store was cut: the record is written once the store answers, not left `approved`. */
async function recordAfterCut(open: () => Promise<Store>): Promise<void> {
  const store = await open();
  try {
    let cuts = 2;
    const d = await deps(cutFor(store, ['recordRelease'], () => cuts-- > 0));
    const subject = `cut ${Math.random().toString(16).slice(2)}`;
    const { id, sha } = await approvedHeld(d, store, subject);
    await decideApproval(d, id, { decision: 'approve', by: 'ops', seenSha256: sha });
    expect(smtp.received.filter((m) => m.raw.includes(subject))).toHaveLength(1);
    await vi.waitFor(async () => expect((await store.getDelivery(id))!.status).toBe('sent'), { timeout: 5000, interval: 100 });
    expect(cuts).toBe(-1);
  } finally {
    await store.close();
  }
}

/** Its record and release outcome lost for good (the store cut past the retries): the release that takes it over records the result kept under its key. */
async function recordAfterTakeover(open: () => Promise<Store>): Promise<void> {
  const store = await open();
  try {
    const env = { NOTIFY_SEND_BUDGET_MS: '1000' };
    const d = await deps(
      cutFor(store, ['recordRelease', 'finishRelease'], () => true),
      env,
    );
    const subject = `lost ${Math.random().toString(16).slice(2)}`;
    const { id, sha } = await approvedHeld(d, store, subject);
    await decideApproval(d, id, { decision: 'approve', by: 'ops', seenSha256: sha });
    const mine = () => smtp.received.filter((m) => m.raw.includes(subject));
    expect(mine()).toHaveLength(1);
    expect((await store.getDelivery(id))!.status).toBe('approved');
    expect((await store.getOutboxEntry(id))!.state).toBe('releasing');
    await new Promise((r) => setTimeout(r, 3_100)); // the lease: two budgets and 1 s
    expect(await releaseDue(await deps(store, env))).toEqual([{ id, state: 'released' }]);
    expect(mine()).toHaveLength(1);
    expect(await store.getDelivery(id)).toMatchObject({ status: 'sent', approval: { outcome: 'approved' } });
  } finally {
    await store.close();
  }
}

describe('an approval survives its process', () => {
  it('SQLite: an edit of an approved send not yet released asks again, and only the edit leaves', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'approval-edit-')), 'notify.db');
    await editedAfterApproval(() => openSqliteStore({ file, log: silentLogger }));
  });

  it.skipIf(pgSkip !== null)('PostgreSQL: an edit of an approved send not yet released asks again, and only the edit leaves', async () => {
    const shared = await sharedPostgresSchema('approval_edit');
    try {
      await editedAfterApproval(() => openPostgresStore({ connectionString: PG_URL, schema: shared.schema, log: silentLogger }));
    } finally {
      await shared.close();
    }
  });

  it('SQLite: an edit of an approved send its release has claimed is told it is being released', async () => {
    await editedWhileReleasing(() =>
      openSqliteStore({ file: join(mkdtempSync(join(tmpdir(), 'approval-releasing-')), 'notify.db'), log: silentLogger }),
    );
  });

  it('SQLite: the approved mail left, then the store was cut: its record is written once the store answers', async () => {
    await recordAfterCut(() =>
      openSqliteStore({ file: join(mkdtempSync(join(tmpdir(), 'approval-cut-')), 'notify.db'), log: silentLogger }),
    );
  });

  it('SQLite: its record lost for good, the release that takes it over records the result kept under its key', async () => {
    await recordAfterTakeover(() =>
      openSqliteStore({ file: join(mkdtempSync(join(tmpdir(), 'approval-lost-')), 'notify.db'), log: silentLogger }),
    );
  });

  it('SQLite: approved, the process dies before its release, another connection sends it once', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'approval-release-')), 'notify.db');
    await scenario(() => openSqliteStore({ file, log: silentLogger }));
  });

  it.skipIf(pgSkip !== null)('PostgreSQL: approved, the process dies before its release, another replica sends it once', async () => {
    const shared = await sharedPostgresSchema('approval_release');
    try {
      await scenario(() => openPostgresStore({ connectionString: PG_URL, schema: shared.schema, log: silentLogger }));
    } finally {
      await shared.close();
    }
  });
});
