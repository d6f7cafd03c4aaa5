/**
 * Everyday SMS and Slack over the built CLI, in both protocol eras: MMS media_urls, Slack
 * direct messages by user ID and Block Kit, each as the dry-run record shows it leaving and
 * live against Prism (Twilio's and Slack's published specs) or a fake where Prism cannot say.
 */
import { rmSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { connectCli, ERAS, errorOf, readOutbox, type CliSession, type ToolOutcome } from '../helpers/mcp-cli.js';
import { prismUnavailableReason, startPrism, type PrismPeer } from '../helpers/prism.js';

const SID = 'AC' + '1'.repeat(32);
const prismSkip = prismUnavailableReason();
const describePrism = prismSkip ? describe.skip : describe;

const dirs: string[] = [];
const sessions: CliSession[] = [];
let prismTwilio: PrismPeer | undefined;
let prismSlack: PrismPeer | undefined;
let fakeTwilio: FakePeer;
let fakeSlack: FakePeer;

function env(extra: Record<string, string> = {}): Record<string, string> {
  const dir = tempDataDir('notify-e2e-everyday-');
  dirs.push(dir);
  return cliEnv({ NOTIFY_DATA_DIR: dir, ...extra });
}
async function connect(e: Record<string, string>, era: (typeof ERAS)[number]): Promise<CliSession> {
  const s = await connectCli(e, `everyday-${era}`, era);
  sessions.push(s);
  return s;
}
const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolOutcome;
const send = (client: Client, args: Record<string, unknown>) => call(client, 'send_notification', args);

const MEDIA = ['https://cdn.example.com/chart.png', 'https://cdn.example.com/map.jpg'];
const twilioEnv = (origin: string) => ({
  TWILIO_ACCOUNT_SID: SID,
  TWILIO_AUTH_TOKEN: 'e2e-token',
  TWILIO_FROM: '+14155550111',
  TWILIO_API_URL: origin,
  NOTIFY_SMS_ALLOW: '+1415',
  NOTIFY_SMS_MEDIA_HOSTS: 'cdn.example.com',
});

beforeAll(async () => {
  [fakeTwilio, fakeSlack, prismTwilio, prismSlack] = await Promise.all([
    startFakePeer({ status: 201, json: { sid: 'SM' + 'c'.repeat(32), status: 'queued' } }),
    startFakePeer({ status: 200, json: { ok: true, channel: 'D0DM00001', ts: '1712345678.000500' } }),
    prismSkip ? undefined : startPrism('twilio'),
    prismSkip ? undefined : startPrism('slack'),
  ]);
});
afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  await Promise.allSettled([fakeTwilio?.close(), fakeSlack?.close(), prismTwilio?.stop(), prismSlack?.stop()]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(ERAS)('MMS media_urls, %s client', (era) => {
  it('dry run: the record carries MediaUrl exactly as Twilio would get it', async () => {
    const e = env({ NOTIFY_SMS_MEDIA_HOSTS: 'cdn.example.com' });
    const s = await connect(e, era);
    const result = await send(s.client, { via: 'sms', to: '+14155550123', body: 'Map attached', media_urls: MEDIA });
    expect(result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
    const [row] = await readOutbox(e);
    expect(row!.payload).toMatchObject({ To: '+14155550123', Body: 'Map attached', MediaUrl: MEDIA });
  });

  it('is refused with advice while NOTIFY_SMS_MEDIA_HOSTS is empty, and off-list or plain-http hosts always', async () => {
    const off = await connect(env(), era);
    expect(errorOf(await send(off.client, { via: 'sms', to: '+14155550123', body: 'x', media_urls: MEDIA })).message).toMatch(
      /NOTIFY_SMS_MEDIA_HOSTS lists none/,
    );
    const on = await connect(env({ NOTIFY_SMS_MEDIA_HOSTS: 'cdn.example.com' }), era);
    expect(
      errorOf(await send(on.client, { via: 'sms', to: '+14155550123', body: 'x', media_urls: ['https://attacker.example/x?d=secret'] })),
    ).toMatchObject({ code: 'INVALID_FIELD' });
    expect(
      errorOf(await send(on.client, { via: 'sms', to: '+14155550123', body: 'x', media_urls: ['http://cdn.example.com/a.png'] })).message,
    ).toMatch(/not https/);
  });

  it('live: each URL leaves as its own MediaUrl form field', async () => {
    const s = await connect(env(twilioEnv(fakeTwilio.origin)), era);
    const result = await send(s.client, { via: 'sms', to: '+14155550123', body: 'Map attached', media_urls: MEDIA });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    const form = new URLSearchParams(fakeTwilio.requests.at(-1)!.body);
    expect(form.getAll('MediaUrl')).toEqual(MEDIA);
  });
});

describePrism(`MMS against Prism (Twilio's spec)${prismSkip ? ` [skipped: ${prismSkip}]` : ''}`, () => {
  it('the spec takes MediaUrl: the send comes back sent', async () => {
    const s = await connect(env(twilioEnv(prismTwilio!.origin)), 'modern');
    const result = await send(s.client, { via: 'sms', to: '+14155550123', body: 'Map attached', media_urls: MEDIA });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ via: 'sms', status: 'sent' });
  });
});

const BLOCKS = [
  { type: 'header', text: { type: 'plain_text', text: 'Deploy finished' } },
  { type: 'section', text: { type: 'mrkdwn', text: '*v1.2* is live <!here>' } },
  { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'broadcast', range: 'channel' }] }] },
];
const slackEnv = (origin: string) => ({ SLACK_BOT_TOKEN: 'xoxb-e2e', SLACK_API_URL: origin, NOTIFY_SLACK_ALLOW: 'C0123ABCD,U0123ABCD' });

describe.each(ERAS)('Slack DMs and blocks, %s client', (era) => {
  it('dry run: the record shows the user ID and the blocks as posted, broadcasts inert', async () => {
    const e = env();
    const s = await connect(e, era);
    const result = await send(s.client, { via: 'slack', channel: 'U0123ABCD', text: 'Deploy finished', blocks: BLOCKS });
    expect(result.structuredContent).toMatchObject({ via: 'slack', status: 'dry_run' });
    const [row] = await readOutbox(e);
    const payload = row!.payload as { channel: string; text: string; blocks: unknown[] };
    expect(payload.channel).toBe('U0123ABCD');
    expect(payload.blocks).toHaveLength(3);
    const posted = JSON.stringify(payload.blocks);
    expect(posted).not.toContain('<!here>');
    expect(posted).not.toContain('"broadcast"');
    expect(posted).toContain('Deploy finished');
  });

  it('blocks as JSON text, as every profile lists them: the record holds the objects, an edit takes them too, and text that is not JSON is refused at its path', async () => {
    const e = env();
    const s = await connect(e, era);
    const result = await send(s.client, {
      via: 'slack',
      channel: 'C0123ABCD',
      text: 'Deploy finished',
      blocks: BLOCKS.slice(0, 2).map((b) => JSON.stringify(b)),
    });
    expect(result.structuredContent).toMatchObject({ via: 'slack', status: 'dry_run' });
    const id = String(result.structuredContent!.id);
    const edited = await call(s.client, 'edit_notification', { id, text: 'Deploy done', blocks: [JSON.stringify(BLOCKS[0])] });
    expect(edited.isError, JSON.stringify(edited.structuredContent)).toBeFalsy();
    const [row] = await readOutbox(e);
    expect((row!.payload as { blocks: unknown[] }).blocks).toEqual([BLOCKS[0]]);
    const bad = errorOf(
      await send(s.client, { via: 'slack', channel: 'C0123ABCD', text: 'x', blocks: [JSON.stringify(BLOCKS[0]), '{"type": "header"'] }),
    );
    expect(bad).toMatchObject({ code: 'INVALID_FIELD', path: '/blocks/1' });
    expect(bad.message).toContain('JSON text');
  });

  it('refuses interactive blocks with advice, and a user the allowlist does not name, saying which variable to set', async () => {
    const s = await connect(env(slackEnv(fakeSlack.origin)), era);
    const before = fakeSlack.requests.length;
    const interactive = errorOf(
      await send(s.client, { via: 'slack', channel: 'C0123ABCD', text: 'x', blocks: [{ type: 'actions', elements: [] }] }),
    );
    expect(interactive).toMatchObject({ code: 'INVALID_FIELD' });
    expect(interactive.message).toMatch(/request URL/);
    const stranger = errorOf(await send(s.client, { via: 'slack', channel: 'U0STRANGER', text: 'x' }));
    expect(stranger).toMatchObject({ code: 'RECIPIENT_NOT_ALLOWED' });
    expect(stranger.message).toContain('NOTIFY_SLACK_ALLOW');
    expect(fakeSlack.requests.length).toBe(before);
  });

  it('live: a user ID opens the DM, then posts there with the blocks', async () => {
    const s = await connect(env(slackEnv(fakeSlack.origin)), era);
    fakeSlack.replies.push({ status: 200, json: { ok: true, channel: { id: 'D0DM00001' } } });
    const result = await send(s.client, { via: 'slack', channel: 'U0123ABCD', text: 'Deploy finished', blocks: BLOCKS.slice(0, 1) });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    const [open, post] = fakeSlack.requests.slice(-2);
    expect(open!.path).toBe('/conversations.open');
    expect(post!.path).toBe('/chat.postMessage');
    expect(post!.form).toMatchObject({ channel: 'D0DM00001', text: 'Deploy finished' });
    expect(JSON.parse(post!.form!.blocks!)).toEqual(BLOCKS.slice(0, 1));
  });
});

describePrism(`Slack DM and blocks against Prism (Slack's spec)${prismSkip ? ` [skipped: ${prismSkip}]` : ''}`, () => {
  it('a post to #name, then edit and retract through the channel ID the spec answers', async () => {
    const e = env({ ...slackEnv(prismSlack!.origin), NOTIFY_SLACK_ALLOW: '#deploys' });
    const s = await connect(e, 'modern');
    const sent = await send(s.client, { via: 'slack', channel: '#deploys', text: 'Deploy started' });
    expect(sent.structuredContent, JSON.stringify(sent.structuredContent)).toMatchObject({ via: 'slack', status: 'sent' });
    const id = String(sent.structuredContent!.id);
    const [row] = await readOutbox(e);
    expect(row!.provider_conversation).toMatch(/^[CGD][A-Z0-9]{2,}$/);
    const edited = await call(s.client, 'edit_notification', { id, text: 'Deploy done' });
    expect(edited.isError, JSON.stringify(edited.structuredContent)).toBeFalsy();
    expect((await call(s.client, 'retract_notification', { id })).structuredContent).toMatchObject({ status: 'retracted' });
  });

  it('conversations.open and chat.postMessage with blocks, as the spec declares them', async () => {
    const s = await connect(env(slackEnv(prismSlack!.origin)), 'legacy');
    const result = await send(s.client, { via: 'slack', channel: 'U0123ABCD', text: 'Deploy finished', blocks: BLOCKS });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ via: 'slack', status: 'sent' });
  });
});

describe.each(ERAS)('edit_notification and retract_notification, %s client', (era) => {
  it('dry run: an edit changes the record and keeps it a dry run; a retraction ends it retracted; get_notification shows both', async () => {
    const e = env();
    const s = await connect(e, era);
    const sent = await send(s.client, { via: 'slack', channel: 'C0123ABCD', text: 'Deploy started' });
    const id = String(sent.structuredContent!.id);
    const edited = await call(s.client, 'edit_notification', { id, text: 'Deploy done <!here>', blocks: BLOCKS.slice(0, 2) });
    expect(edited.isError, JSON.stringify(edited.structuredContent)).toBeFalsy();
    expect(edited.structuredContent).toMatchObject({ id, via: 'slack', status: 'dry_run' });
    const [row] = await readOutbox(e);
    const payload = row!.payload as { text: string; blocks: unknown[] };
    expect(payload.text).toMatch(/^Deploy done @\u2060here$/);
    expect(JSON.stringify(payload.blocks)).not.toContain('<!here>');
    const status = await call(s.client, 'get_notification', { id });
    expect(status.structuredContent).toMatchObject({ status: 'dry_run', provider_status: { status: 'edited' } });

    const retracted = await call(s.client, 'retract_notification', { id });
    expect(retracted.structuredContent).toMatchObject({ id, via: 'slack', status: 'retracted' });
    expect((await call(s.client, 'get_notification', { id })).structuredContent).toMatchObject({
      status: 'retracted',
      provider_status: { status: 'deleted' },
    });
    expect(errorOf(await call(s.client, 'retract_notification', { id })).message).toMatch(/retracted already/);
    expect(errorOf(await call(s.client, 'edit_notification', { id, text: 'again' })).code).toBe('INVALID_FIELD');
  });

  it('live: chat.update and chat.delete on the post, by channel and ts', async () => {
    const s = await connect(env(slackEnv(fakeSlack.origin)), era);
    fakeSlack.replies.push({ status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000900' } });
    const sent = await send(s.client, { via: 'slack', channel: 'C0123ABCD', text: 'Deploy started' });
    const id = String(sent.structuredContent!.id);
    fakeSlack.replies.push({ status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000900' } });
    const edited = await call(s.client, 'edit_notification', { id, text: 'Deploy done', blocks: BLOCKS.slice(0, 1) });
    expect(edited.structuredContent).toMatchObject({ status: 'sent' });
    const update = fakeSlack.requests.at(-1)!;
    expect(update.path).toBe('/chat.update');
    expect(update.form).toMatchObject({ channel: 'C0123ABCD', ts: '1712345678.000900', text: 'Deploy done' });
    expect(JSON.parse(update.form.blocks!)).toEqual(BLOCKS.slice(0, 1));
    fakeSlack.replies.push({ status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000900' } });
    expect((await call(s.client, 'retract_notification', { id })).structuredContent).toMatchObject({ status: 'retracted' });
    const del = fakeSlack.requests.at(-1)!;
    expect(del.path).toBe('/chat.delete');
    expect(del.form).toMatchObject({ channel: 'C0123ABCD', ts: '1712345678.000900' });
  });

  it('live: a post to #name is edited and deleted by the channel ID its post answered, which the record keeps', async () => {
    const e = env({ ...slackEnv(fakeSlack.origin), NOTIFY_SLACK_ALLOW: '#deploys' });
    const s = await connect(e, era);
    fakeSlack.replies.push({ status: 200, json: { ok: true, channel: 'C0DEPLOYS', ts: '1712345678.000901' } });
    const sent = await send(s.client, { via: 'slack', channel: '#deploys', text: 'Deploy started' });
    expect(sent.isError, JSON.stringify(sent.structuredContent)).toBeFalsy();
    const id = String(sent.structuredContent!.id);
    const [row] = await readOutbox(e);
    expect(row).toMatchObject({ provider_message_id: '1712345678.000901', provider_conversation: 'C0DEPLOYS' });
    expect((row!.payload as { channel: string }).channel).toBe('#deploys');
    fakeSlack.replies.push({ status: 200, json: { ok: true, channel: 'C0DEPLOYS', ts: '1712345678.000901' } });
    const edited = await call(s.client, 'edit_notification', { id, text: 'Deploy done' });
    expect(edited.structuredContent, JSON.stringify(edited.structuredContent)).toMatchObject({ status: 'sent' });
    expect(fakeSlack.requests.at(-1)).toMatchObject({
      path: '/chat.update',
      form: { channel: 'C0DEPLOYS', ts: '1712345678.000901', text: 'Deploy done' },
    });
    fakeSlack.replies.push({ status: 200, json: { ok: true, channel: 'C0DEPLOYS', ts: '1712345678.000901' } });
    expect((await call(s.client, 'retract_notification', { id })).structuredContent).toMatchObject({ status: 'retracted' });
    expect(fakeSlack.requests.at(-1)).toMatchObject({ path: '/chat.delete', form: { channel: 'C0DEPLOYS', ts: '1712345678.000901' } });
  });

  it("email and SMS already handed over are ALREADY_SENT; another client's id is NOT_FOUND", async () => {
    const e = env(twilioEnv(fakeTwilio.origin));
    const s = await connect(e, era);
    const sms = await send(s.client, { via: 'sms', to: '+14155550123', body: 'hi' });
    const id = String(sms.structuredContent!.id);
    expect(errorOf(await call(s.client, 'retract_notification', { id })).code).toBe('ALREADY_SENT');
    expect(errorOf(await call(s.client, 'edit_notification', { id, text: 'x' })).code).toBe('ALREADY_SENT');
    const other = await connectCli(e, 'someone-else', era);
    sessions.push(other);
    expect(errorOf(await call(other.client, 'retract_notification', { id })).code).toBe('NOT_FOUND');
  });
});
