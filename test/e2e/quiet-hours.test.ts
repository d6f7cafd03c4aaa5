/**
 * Quiet hours releasing a held send, end to end over the built CLI (stdio) in both protocol
 * eras: a window around now that ends seconds later (NOTIFY_QUIET_HOURS with HH:MM:SS), a
 * dry-run SMS answered `held` with release_at, and its dry-run record written only after the
 * window ends, exactly once. A real wait of a few seconds: the CLI runs on the real clock.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { connectCli, ERAS, readOutbox, type CliSession, type ToolOutcome } from '../helpers/mcp-cli.js';

const dirs: string[] = [];
const sessions: CliSession[] = [];

afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `HH:MM:SS` in UTC of instant t. */
const clock = (t: number) => new Date(t).toISOString().slice(11, 19);

async function until(what: string, ok: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.each(ERAS)('quiet hours release over the built CLI (%s)', (era) => {
  it('a send inside a window ending seconds from now is held with release_at, and leaves once after the window ends', async () => {
    const dir = tempDataDir('notify-e2e-quiet-');
    dirs.push(dir);
    // Ahead enough that a loaded machine's slow session start does not outrun the window.
    const ends = Math.ceil((Date.now() + 12_000) / 1000) * 1000;
    const env = cliEnv({
      NOTIFY_DATA_DIR: dir,
      NOTIFY_QUIET_HOURS: `sms=${clock(ends - 60_000)}-${clock(ends)}@UTC`,
      NOTIFY_SCHEDULE_POLL_S: '1',
    });
    const s = await connectCli(env, `quiet-${era}`, era);
    sessions.push(s);
    const call = (name: string, args: Record<string, unknown>) => s.client.callTool({ name, arguments: args }) as Promise<ToolOutcome>;
    const dryRuns = async (id: string) => (await readOutbox(env)).filter((r) => r.id === id && r.status === 'dry_run');

    const sent = await call('send_notification', { via: 'sms', to: '+14155550123', body: `after quiet hours ${era}` });
    expect(sent.isError, JSON.stringify(sent.structuredContent)).toBeFalsy();
    const held = sent.structuredContent as { id: string; status: string; release_at: string };
    expect(held).toMatchObject({ status: 'held', release_at: new Date(ends).toISOString() });
    expect(Date.now()).toBeLessThan(ends); // the checks below ran inside the window
    expect((await call('get_notification', { id: held.id })).structuredContent).toMatchObject({
      status: 'held',
      release_at: held.release_at,
    });
    expect(await dryRuns(held.id)).toHaveLength(0);

    await until(
      'the held send to leave',
      async () => ((await call('get_notification', { id: held.id })).structuredContent as { status: string }).status === 'dry_run',
    );
    expect(Date.now()).toBeGreaterThanOrEqual(ends);
    // Several more polls, then still exactly one record.
    await new Promise((r) => setTimeout(r, 2_500));
    const records = await dryRuns(held.id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ via: 'sms', status: 'dry_run', client: `quiet-${era}` });
  });
});
