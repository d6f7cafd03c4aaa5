/**
 * Sends not yet sent, over the built CLI in both protocol eras, under NOTIFY_APPROVAL_MODE=console
 * (SMS needs approval; dry-run, so each send is its record): a stdio agent and an `--http`
 * server whose console an operator uses, sharing one SQLite store.
 * - retract_notification of a pending_approval send cancels it, and the console can no longer decide it;
 * - edit_notification of a pending_approval send puts the new payload before the person: a
 *   decision on the old hash is refused, one on the new hash sends the new text;
 * - edit_notification of a scheduled send changes what its release sends;
 * - a scheduled send that meets the rule at its release is held under its own id, and approved under it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { raw } from '../helpers/http.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { connectCli, ERAS, errorOf, readOutbox, type CliSession, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';

const OPS = 'ops-token-0123456789abcdef';
const env = cliEnv({
  NOTIFY_DATA_DIR: tempDataDir('notify-approval-edit-'),
  NOTIFY_APPROVAL: 'sms',
  NOTIFY_APPROVAL_MODE: 'console',
  NOTIFY_HTTP_TOKENS: `ops:${OPS}`,
  NOTIFY_OPERATOR_CLIENTS: 'ops',
  NOTIFY_SCHEDULE_POLL_S: '1',
});
let server: HttpCli | undefined;
const sessions: CliSession[] = [];

beforeAll(async () => {
  server = await startHttpCli(env);
});
afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  await server?.stop();
});

async function open(era: Era): Promise<CliSession> {
  const s = await connectCli(env, `editor-${era}`, era);
  sessions.push(s);
  return s;
}
const call = (s: CliSession, name: string, args: Record<string, unknown>) =>
  s.client.callTool({ name, arguments: args }) as Promise<ToolOutcome>;
const sms = (body: string, extra: Record<string, unknown> = {}) => ({ via: 'sms', to: '+14155550123', body, ...extra });
const row = async (id: string) => (await readOutbox(env)).find((r) => r.id === id);

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; !(await ok()); i++) {
    if (i > 300) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A console decision by the operator on hash `sha`. */
const decide = (id: string, sha: string, decision: 'approve' | 'decline' = 'approve') =>
  raw(`${server!.origin}/console/approvals/${id}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${OPS}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ decision, payload_sha256: sha }).toString(),
  });

describe.each(ERAS)('sends not yet sent, under console approval (%s)', (era) => {
  it('retracts a pending_approval send: cancelled, and no one can approve it after', async () => {
    const s = await open(era);
    const held = await call(s, 'send_notification', sms(`retract me ${era}`));
    expect(held.structuredContent).toMatchObject({ status: 'pending_approval' });
    const id = held.structuredContent!.id as string;
    const sha = (await row(id))!.approval!.payload_sha256 as string;
    const r = await call(s, 'retract_notification', { id });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ id, status: 'cancelled' });
    expect((await row(id))!.status).toBe('cancelled');
    expect((await decide(id, sha)).status).toBe(409);
    expect(errorOf(await call(s, 'retract_notification', { id })).code).toBe('INVALID_FIELD');
    expect((await row(id))!.status).toBe('cancelled');
  });

  it('edits a pending_approval send: the old hash is refused, the new one sends the new text', async () => {
    const s = await open(era);
    const held = await call(s, 'send_notification', sms(`first draft ${era}`));
    const id = held.structuredContent!.id as string;
    const oldSha = (await row(id))!.approval!.payload_sha256 as string;
    const edited = await call(s, 'edit_notification', { id, text: `second draft ${era}` });
    expect(edited.isError, JSON.stringify(edited)).toBeFalsy();
    expect(edited.structuredContent).toMatchObject({ id, status: 'pending_approval' });
    const now = (await row(id))!;
    expect(now.status).toBe('pending_approval');
    expect((now.payload as { Body: string }).Body).toBe(`second draft ${era}`);
    const newSha = now.approval!.payload_sha256 as string;
    expect(newSha).not.toBe(oldSha);
    // The person saw the first draft: that decision is refused, and nothing is sent.
    expect((await decide(id, oldSha)).status).toBe(409);
    expect((await row(id))!.status).toBe('pending_approval');
    expect((await decide(id, newSha)).status).toBe(303);
    expect(await row(id)).toMatchObject({
      status: 'dry_run',
      payload: { Body: `second draft ${era}` },
      approval: { outcome: 'approved', payload_sha256: newSha },
    });
    // Sent: an SMS cannot change any more.
    expect(errorOf(await call(s, 'edit_notification', { id, text: 'third' })).code).toBe('ALREADY_SENT');
  });

  it('edits a scheduled send, whose release then holds it under its own id; approved, it sends the edited text', async () => {
    const s = await open(era);
    const sendAt = new Date(Date.now() + 5_000).toISOString();
    const scheduled = await call(s, 'send_notification', sms(`scheduled draft ${era}`, { send_at: sendAt }));
    expect(scheduled.structuredContent).toMatchObject({ status: 'scheduled' });
    const id = scheduled.structuredContent!.id as string;
    const edited = await call(s, 'edit_notification', { id, text: `scheduled final ${era}` });
    expect(edited.isError, JSON.stringify(edited)).toBeFalsy();
    expect(edited.structuredContent).toMatchObject({ id, status: 'scheduled' });
    await until('the release to hold it for approval', async () => (await row(id))?.status === 'pending_approval');
    const held = (await row(id))!;
    expect((held.payload as { Body: string }).Body).toBe(`scheduled final ${era}`);
    expect((await readOutbox(env)).filter((r) => r.id === id)).toHaveLength(1);
    expect((await decide(id, held.approval!.payload_sha256 as string)).status).toBe(303);
    expect(await row(id)).toMatchObject({ status: 'dry_run', payload: { Body: `scheduled final ${era}` } });
    expect(
      (await readOutbox(env)).filter((r) => (r.payload as { Body?: string } | null)?.Body?.startsWith('scheduled') && r.id === id),
    ).toHaveLength(1);
    expect(
      (await readOutbox(env)).filter(
        (r) =>
          ((r.payload as { Body?: string } | null)?.Body ?? '').endsWith(`${era}`) &&
          ((r.payload as { Body?: string } | null)?.Body ?? '').startsWith('scheduled'),
      ),
    ).toHaveLength(1);
  });
});
