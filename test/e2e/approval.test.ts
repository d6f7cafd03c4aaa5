/**
 * Approval over the built CLI (stdio), in both protocol eras, with v2 SDK clients: one that
 * asks its person (form elicitation) and one that cannot. Approve sends what was shown;
 * decline sends nothing; a client that cannot ask gets APPROVAL_REQUIRED; an approved first
 * contact is remembered across a restart and `notify-mcp contacts` lists and forgets it; a
 * 2026-07-28 state approved for one payload does not send another. Every outcome is in the
 * delivery record.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { askingClient, modernMeta, mutedClient } from '../helpers/approval.js';
import { ChildStdioTransport, cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import type { Client } from '@modelcontextprotocol/client';
import { assertBuilt, ERAS, errorOf, rawStdio, readOutbox, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';

const transports: ChildStdioTransport[] = [];
afterAll(async () => {
  await Promise.all(transports.map((t) => t.close()));
});

function approvalEnv(rules: string) {
  return cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-approval-'), NOTIFY_APPROVAL: rules });
}

async function start(
  env: Record<string, string>,
  client: { connect(t: ChildStdioTransport): Promise<void> },
): Promise<ChildStdioTransport> {
  assertBuilt();
  const transport = new ChildStdioTransport([], env);
  transports.push(transport);
  await client.connect(transport);
  return transport;
}

const send = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: 'send_notification', arguments: args })) as ToolOutcome;

const SMS = { via: 'sms', to: '+14155550123', body: 'Your table is ready\nCome to the front desk' };
const EMAIL = { via: 'email', to: 'ana@example.com', subject: 'Welcome aboard', body_html: '<p>Hello Ana</p>' };

describe.each(ERAS)('approval over stdio, %s client', (era: Era) => {
  it('asks with channel, recipients, first line, size and reason; approve sends exactly that, recorded', async () => {
    const env = approvalEnv('sms');
    const asking = askingClient('approver', era, 'accept');
    await start(env, asking.client);
    const result = await send(asking.client, SMS);
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
    expect(asking.questions).toHaveLength(1);
    const q = asking.questions[0]!;
    expect(q).toContain('Channel: sms');
    expect(q).toContain('Recipients: +14155550123');
    expect(q).toContain('First line: Your table is ready');
    expect(q).toContain(`Body: ${SMS.body.length} characters`);
    expect(q).toContain('every sms send needs approval (sms)');

    const [row] = await readOutbox(env);
    expect(row!.id).toBe(result.structuredContent!.id);
    expect(row).toMatchObject({ status: 'dry_run', approval: { outcome: 'approved', reasons: ['sms'] } });
    expect(row!.payload).toMatchObject({ To: SMS.to, Body: SMS.body });

    // A send no rule names is not asked about.
    const mail = await send(asking.client, EMAIL);
    expect(mail.isError).toBeFalsy();
    expect(asking.questions).toHaveLength(1);
  });

  it.each(['decline', 'cancel', 'refuse'] as const)('%s: APPROVAL_DECLINED, nothing sent, recorded', async (answer) => {
    const env = approvalEnv('all');
    const asking = askingClient('decliner', era, answer);
    await start(env, asking.client);
    const result = await send(asking.client, SMS);
    expect(errorOf(result)).toMatchObject({ code: 'APPROVAL_DECLINED', via: 'sms' });
    const rows = await readOutbox(env);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'failed',
      error_code: 'APPROVAL_DECLINED',
      approval: { outcome: 'declined', reasons: ['all'] },
    });
  });

  it('a client that cannot ask gets APPROVAL_REQUIRED with what to do, recorded', async () => {
    const env = approvalEnv('sms');
    const client = mutedClient('muted', era);
    await start(env, client);
    const result = await send(client, SMS);
    const error = errorOf(result);
    expect(error).toMatchObject({ code: 'APPROVAL_REQUIRED', via: 'sms' });
    expect(error.message).toMatch(/^This sms send needs a person's approval/);
    expect(error.message).toContain('elicitation');
    const rows = await readOutbox(env);
    expect(rows[0]).toMatchObject({ status: 'failed', error_code: 'APPROVAL_REQUIRED', approval: { outcome: 'required' } });
  });

  it('remembers an approved first contact across a restart; `contacts` lists and forgets it', async () => {
    const env = approvalEnv('first-contact');
    const first = askingClient('first', era, 'accept');
    const t1 = await start(env, first.client);
    expect((await send(first.client, EMAIL)).isError).toBeFalsy();
    expect(first.questions).toHaveLength(1);
    expect(first.questions[0]).toContain('first contact with ana@example.com');
    await t1.close();

    const listed = await runCli(['contacts'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/email\s+ana@example\.com/);

    const second = askingClient('second', era, 'refuse');
    const t2 = await start(env, second.client);
    const again = await send(second.client, { ...EMAIL, subject: 'Second mail' });
    expect(again.isError, JSON.stringify(again)).toBeFalsy();
    expect(second.questions).toHaveLength(0);
    await t2.close();

    const forgot = await runCli(['contacts', 'forget', 'email', 'ana@example.com'], env);
    expect(forgot.code, forgot.stderr).toBe(0);
    const third = askingClient('third', era, 'refuse');
    await start(env, third.client);
    expect(errorOf(await send(third.client, EMAIL)).code).toBe('APPROVAL_DECLINED');
    expect(third.questions).toHaveLength(1);
  });
});

describe('approval over stdio, 2026-07-28 on the wire', () => {
  it('binds the state to the payload: a state approved for A sends B only after a new question', async () => {
    const env = approvalEnv('sms');
    const transport = new ChildStdioTransport([], env);
    transports.push(transport);
    const s = await rawStdio(transport);
    const call = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      s.request('tools/call', { name: 'send_notification', arguments: args, _meta: modernMeta('raw'), ...extra });

    const asked = await call(SMS);
    expect(asked.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    expect(asked.result.inputRequests.approval.params.message).toContain('First line: Your table is ready');
    const approveA = {
      inputResponses: { approval: { action: 'accept', content: { approve: true } } },
      requestState: asked.result.requestState,
    };

    // Payload B with A's approved state: not sent, asked about as a new message.
    const changed = await call({ ...SMS, body: 'Send the wire transfer now' }, approveA);
    expect(changed.result).toMatchObject({ resultType: 'input_required' });
    expect(changed.result.inputRequests.approval.params.message).toContain('First line: Send the wire transfer now');
    expect(changed.result.requestState).not.toBe(asked.result.requestState);
    expect(await readOutbox(env)).toHaveLength(0);

    // A with its own approval sends A, once: the same approval again replays.
    const sent = await call(SMS, approveA);
    expect(sent.result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
    const replay = await call(SMS, approveA);
    expect(replay.result.structuredContent).toMatchObject({ id: sent.result.structuredContent.id, replayed: true });
    const rows = await readOutbox(env);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.payload).toMatchObject({ Body: SMS.body });

    // A forged state is refused before anything runs. The character changed is inside the
    // MAC, not its last one: that one carries two padding bits, and changing only those
    // leaves the same bytes (it failed one run in sixteen).
    const state: string = asked.result.requestState;
    const at = state.length - 5;
    const forgedState = state.slice(0, at) + (state[at] === 'A' ? 'B' : 'A') + state.slice(at + 1);
    const forged = await call(SMS, { ...approveA, requestState: forgedState });
    expect(forged.error).toMatchObject({ code: -32602 });
    expect(await readOutbox(env)).toHaveLength(1);
  });
});
