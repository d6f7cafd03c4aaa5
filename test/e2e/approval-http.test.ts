/**
 * Approval over `notify-mcp --http`, 2025-11-25 sessions and stateless 2026-07-28: approve and
 * APPROVAL_REQUIRED in both eras, and a person who thinks longer than a send's whole budget
 * holds nothing: another client's calls (asked and not) complete meanwhile, and the approved
 * send still has its full budget once the answer comes.
 */
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askingClient, mutedClient } from '../helpers/approval.js';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { ERAS, errorOf, readOutbox, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';

const BUDGET_MS = 2_000;
const env = cliEnv({
  NOTIFY_DATA_DIR: tempDataDir('notify-approval-http-'),
  NOTIFY_APPROVAL: 'sms',
  NOTIFY_SEND_BUDGET_MS: String(BUDGET_MS),
});
let server: HttpCli | undefined;
let url: string;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startHttpCli(env);
  url = server.url;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await server?.stop();
});

async function connected<C extends Client>(client: C): Promise<C> {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

const send = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: 'send_notification', arguments: args })) as ToolOutcome;
const SMS = { via: 'sms', to: '+14155550123', body: 'Door code 4411' };

describe.each(ERAS)('approval over HTTP, %s client', (era: Era) => {
  it('approve sends; decline sends nothing; a client that cannot ask gets APPROVAL_REQUIRED; each recorded', async () => {
    const asking = askingClient(`approver-${era}`, era, 'accept');
    await connected(asking.client);
    const ok = await send(asking.client, SMS);
    expect(ok.isError, JSON.stringify(ok)).toBeFalsy();
    expect(asking.questions[0]).toContain('Recipients: +14155550123');

    const muted = await connected(mutedClient(`muted-${era}`, era));
    expect(errorOf(await send(muted, SMS)).code).toBe('APPROVAL_REQUIRED');

    const declining = askingClient(`decliner-${era}`, era, 'decline');
    await connected(declining.client);
    expect(errorOf(await send(declining.client, SMS)).code).toBe('APPROVAL_DECLINED');

    const rows = await readOutbox(env);
    expect(rows.find((r) => r.id === ok.structuredContent!.id)).toMatchObject({ approval: { outcome: 'approved' } });
    expect(rows.filter((r) => r.client === `decliner-${era}`)).toMatchObject([
      { error_code: 'APPROVAL_DECLINED', approval: { outcome: 'declined' } },
    ]);
    expect(rows.filter((r) => r.client === `muted-${era}`)).toMatchObject([
      { error_code: 'APPROVAL_REQUIRED', approval: { outcome: 'required' } },
    ]);
  });
});

describe('a person thinking holds nothing', () => {
  it.each(ERAS)('other clients (%s) complete while an approval is pending longer than the send budget', async (otherEra) => {
    let release!: () => void;
    const thinking = new Promise<void>((r) => (release = r));
    const slow = askingClient('slow-person', 'legacy', async () => (await thinking, 'accept'));
    await connected(slow.client);
    const pending = send(slow.client, { ...SMS, idempotency_key: `slow-${otherEra}` });
    await expect.poll(() => slow.questions.length, { timeout: 10_000 }).toBe(1);

    const other = askingClient(`other-${otherEra}`, otherEra, 'accept');
    await connected(other.client);
    // Asked and answered, to the same recipient, while the first question is open.
    const asked = await send(other.client, SMS);
    expect(asked.isError, JSON.stringify(asked)).toBeFalsy();
    const plain = await send(other.client, { via: 'email', to: 'ops@example.com', subject: 'Hi', body_html: '<p>hi</p>' });
    expect(plain.isError, JSON.stringify(plain)).toBeFalsy();

    // Longer than a whole send budget: the approved send's budget starts at the answer.
    await new Promise((r) => setTimeout(r, BUDGET_MS + 500));
    release();
    const approved = await pending;
    expect(approved.isError, JSON.stringify(approved)).toBeFalsy();
    expect(approved.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
  });
});
