/**
 * NOTIFY_APPROVAL_MODE=ask-then-console over the built CLI: one store, a stdio process and an
 * `--http` process sharing it, in both protocol eras, with a client family that can ask
 * (form elicitation: its person is asked, as in ask mode) and one that cannot (its send is
 * held, pending_approval, instead of APPROVAL_REQUIRED). An operator then decides each held
 * send in the HTTP process's console (Bearer): an approval sends it once, a decline sends
 * nothing, both on the record; a non-operator token is refused.
 */
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askingClient, mutedClient } from '../helpers/approval.js';
import { ChildStdioTransport, cliEnv, tempDataDir } from '../helpers/cli.js';
import { raw } from '../helpers/http.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { assertBuilt, ERAS, readOutbox, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';

const OPS = 'ops-token-0123456789abcdef';
const BOT = 'bot-token-0123456789abcdef';
const env = cliEnv({
  NOTIFY_DATA_DIR: tempDataDir('notify-approval-console-'),
  NOTIFY_APPROVAL: 'sms',
  NOTIFY_APPROVAL_MODE: 'ask-then-console',
  NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`,
  NOTIFY_OPERATOR_CLIENTS: 'ops',
});
let server: HttpCli | undefined;
const transports: ChildStdioTransport[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  server = await startHttpCli(env);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(transports.map((t) => t.close()));
  await server?.stop();
});

async function overStdio<C extends Client>(client: C): Promise<C> {
  assertBuilt();
  const transport = new ChildStdioTransport([], env);
  transports.push(transport);
  await client.connect(transport);
  return client;
}

async function overHttp<C extends Client>(client: C): Promise<C> {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server!.url), { requestInit: { headers: { Authorization: `Bearer ${BOT}` } } }),
  );
  clients.push(client);
  return client;
}

const send = async (client: Client, body: string) =>
  (await client.callTool({ name: 'send_notification', arguments: { via: 'sms', to: '+14155550123', body } })) as ToolOutcome;

/** A decision in the console, as a script makes it: Bearer, the hash read off the approvals page. */
async function decide(id: string, decision: 'approve' | 'decline', token = OPS) {
  const page = await raw(`${server!.origin}/console/approvals`, { headers: { Authorization: `Bearer ${token}` } });
  const sha =
    new RegExp(`action="/console/approvals/${id}"[\\s\\S]*?name="payload_sha256" value="([0-9a-f]{64})"`).exec(page.body)?.[1] ?? '';
  return raw(`${server!.origin}/console/approvals/${id}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ decision, payload_sha256: sha, reason: `${decision} from e2e` }).toString(),
  });
}

describe.each(ERAS)('ask-then-console, %s clients', (era: Era) => {
  for (const transport of ['stdio', 'http'] as const) {
    it(`over ${transport}: a client that asks asks; one that cannot is held, then approved or declined in the console`, async () => {
      const connect = transport === 'stdio' ? overStdio : overHttp;
      const asking = askingClient(`asker-${era}-${transport}`, era, 'accept');
      await connect(asking.client);
      const asked = await send(asking.client, `asked ${era} ${transport}`);
      expect(asked.isError, JSON.stringify(asked)).toBeFalsy();
      expect(asked.structuredContent).toMatchObject({ status: 'dry_run' });
      expect(asking.questions).toHaveLength(1);

      const muted = await connect(mutedClient(`muted-${era}-${transport}`, era));
      const toApprove = await send(muted, `approve me ${era} ${transport}`);
      const toDecline = await send(muted, `decline me ${era} ${transport}`);
      for (const held of [toApprove, toDecline]) {
        expect(held.isError, JSON.stringify(held)).toBeFalsy();
        expect(held.structuredContent).toMatchObject({ via: 'sms', status: 'pending_approval' });
      }
      const approveId = toApprove.structuredContent!.id as string;
      const declineId = toDecline.structuredContent!.id as string;

      expect((await decide(approveId, 'approve', BOT)).status).toBe(403);
      expect((await decide(approveId, 'approve')).status).toBe(303);
      expect((await decide(approveId, 'approve')).status).toBe(409);
      expect((await decide(declineId, 'decline')).status).toBe(303);

      const rows = await readOutbox(env);
      const approved = rows.find((r) => r.id === approveId)!;
      expect(approved).toMatchObject({
        status: 'dry_run',
        approval: { outcome: 'approved', decided_by: 'ops', reason: 'approve from e2e', reasons: ['sms'] },
      });
      expect((approved.payload as { Body: string }).Body).toBe(`approve me ${era} ${transport}`);
      expect(rows.find((r) => r.id === declineId)).toMatchObject({
        status: 'declined',
        approval: { outcome: 'declined', decided_by: 'ops' },
      });
      // The held sends were never recorded twice: one row each.
      expect(rows.filter((r) => r.id === approveId || r.id === declineId)).toHaveLength(2);
    });
  }
});
