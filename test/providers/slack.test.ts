/**
 * Slack adapter contract: the official @slack/web-api client against Prism serving Slack's
 * published Web API description, plus a small fake for what Prism cannot answer. Its burst
 * contract (nothing reaches Slack after its call answered) is ./burst-contract.test.ts, shared with Twilio.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError } from '../../src/providers/errors.js';
import { sendFailureInfo, sendWithRetry } from '../../src/providers/retry.js';
import { createSlackProvider, type SlackPayload } from '../../src/channels/slack/web-api.js';
import type { Provider } from '../../src/providers/types.js';
import { startFakePeer, startRecordingProxy, type FakePeer, type RecordingProxy } from '../helpers/fakes.js';
import { freePort, PRISM_REQUEST_TIMEOUT_MS, prismUnavailableReason, startPrism, type PrismPeer } from '../helpers/prism.js';
import { caught } from '../helpers/caught.js';

const TOKEN = 'xoxb-test-token';
const ctx = (id = 'ntf_slack') => ({ notificationId: id, signal: new AbortController().signal });

const skipReason = prismUnavailableReason();
const describePrism = skipReason ? describe.skip : describe;

describePrism(`Slack provider against Prism (Slack's Web API spec)${skipReason ? ` [skipped: ${skipReason}]` : ''}`, () => {
  let prism: PrismPeer;
  let provider: Provider<SlackPayload>;
  /** In front of Prism, for what reached it (Prism keeps no log). */
  let proxy: RecordingProxy;

  beforeAll(async () => {
    prism = await startPrism('slack');
    proxy = await startRecordingProxy(prism.origin);
    provider = await createSlackProvider({ token: TOKEN, apiUrl: proxy.origin, timeoutMs: PRISM_REQUEST_TIMEOUT_MS, log: silentLogger });
  });
  afterAll(async () => {
    await proxy?.close();
    await prism?.stop();
  });

  it('posts a message and returns its ts as the provider message id', async () => {
    const receipt = await provider.send({ channel: 'C0123ABCD', text: 'deploy finished' }, ctx());
    expect(receipt.providerMessageId).toMatch(/^\d+\.\d+$/);
  });

  it('posts a thread reply (thread_ts) that the spec accepts', async () => {
    const receipt = await provider.send({ channel: '#alerts', text: 'still failing', thread_ts: '1712345678.123456' }, ctx());
    expect(receipt.providerMessageId).toMatch(/^\d+\.\d+$/);
  });

  it('posts to a user by ID: conversations.open, then chat.postMessage to the DM, both as the spec declares them', async () => {
    const receipt = await provider.send({ channel: 'U0123ABCD', text: 'your deploy finished' }, ctx());
    expect(receipt.providerMessageId).toMatch(/^\d+\.\d+$/);
  });

  it('posts Block Kit blocks with the text as fallback', async () => {
    const blocks = [{ type: 'header', text: { type: 'plain_text', text: 'Deploy' } }, { type: 'divider' }];
    const receipt = await provider.send({ channel: 'C0123ABCD', text: 'Deploy', blocks }, ctx());
    expect(receipt.providerMessageId).toMatch(/^\d+\.\d+$/);
  });

  it('edits and deletes a post (chat.update, chat.delete), as the spec declares them: channel, ts, text and blocks as Slack received them', async () => {
    const posted = { payload: { channel: 'C0123ABCD', text: 'first' }, providerMessageId: '1712345678.123456' };
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*second*' } }];
    const before = proxy.requests.length;
    await provider.edit!(posted, { channel: 'C0123ABCD', text: 'second', blocks }, ctx());
    await provider.edit!(posted, { channel: 'C0123ABCD', text: 'third' }, ctx());
    await provider.retract!(posted, ctx());
    const [withBlocks, textOnly, del] = proxy.requests.slice(before);
    expect(proxy.requests.slice(before)).toHaveLength(3);
    expect(withBlocks).toMatchObject({
      path: '/chat.update',
      status: 200,
      form: { channel: 'C0123ABCD', ts: '1712345678.123456', text: 'second' },
    });
    expect(withBlocks!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(withBlocks!.form.blocks!)).toEqual(blocks);
    // An edit without blocks clears the post's old ones: Slack would keep showing them.
    expect(textOnly).toMatchObject({
      path: '/chat.update',
      status: 200,
      form: { channel: 'C0123ABCD', ts: '1712345678.123456', text: 'third', blocks: '[]' },
    });
    expect(del).toMatchObject({ path: '/chat.delete', status: 200, form: { channel: 'C0123ABCD', ts: '1712345678.123456' } });
    expect(del!.form).not.toHaveProperty('text');
  });

  it('a post to #name returns the channel ID the spec answers, and edit and delete go to that ID', async () => {
    const receipt = await provider.send({ channel: '#deploys', text: 'first' }, ctx());
    // The spec's chat.postMessage answers `channel` (a defs_channel ID); Prism answers its example.
    expect(receipt.conversation).toMatch(/^[CGD][A-Z0-9]{2,}$/);
    const posted = {
      payload: { channel: '#deploys', text: 'first' },
      providerMessageId: receipt.providerMessageId!,
      conversation: receipt.conversation,
    };
    const before = proxy.requests.length;
    await provider.edit!(posted, { channel: '#deploys', text: 'second' }, ctx());
    await provider.retract!(posted, ctx());
    const [update, del] = proxy.requests.slice(before);
    expect(update).toMatchObject({
      path: '/chat.update',
      status: 200,
      form: { channel: receipt.conversation, ts: receipt.providerMessageId, text: 'second' },
    });
    expect(del).toMatchObject({
      path: '/chat.delete',
      status: 200,
      form: { channel: receipt.conversation, ts: receipt.providerMessageId },
    });
  });

  it('maps a missing required field (channel, 422) to ProviderRejectedError', async () => {
    const err = await caught(provider.send({ text: 'no channel' } as SlackPayload, ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).vendorCode).toBe(422);
  });

  it('maps a missing token (401) to ProviderRejectedError naming SLACK_BOT_TOKEN', async () => {
    const anonymous = await createSlackProvider({
      token: '',
      apiUrl: prism.origin,
      timeoutMs: PRISM_REQUEST_TIMEOUT_MS,
      log: silentLogger,
    });
    const err = await caught(anonymous.send({ channel: 'C0123ABCD', text: 'hi' }, ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).vendorCode).toBe(401);
    expect((err as Error).message).toContain('SLACK_BOT_TOKEN');
  });
});

describe('Slack provider against a fake for what Prism cannot answer', () => {
  let fake: FakePeer;
  let provider: Provider<SlackPayload>;
  const ok = { status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000100' } };

  beforeAll(async () => {
    fake = await startFakePeer();
    provider = await createSlackProvider({ token: TOKEN, apiUrl: fake.origin, timeoutMs: 5_000, log: silentLogger });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('sends channel, text and thread_ts with the bot token as Bearer', async () => {
    fake.replies.push(ok);
    const receipt = await provider.send({ channel: 'C0123ABCD', text: 'hello', thread_ts: '1712345678.123456' }, ctx());
    expect(receipt.providerMessageId).toBe('1712345678.000100');
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe('/chat.postMessage');
    expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req.form).toMatchObject({ channel: 'C0123ABCD', text: 'hello', thread_ts: '1712345678.123456' });
  });

  it('edits and deletes a #name post by the channel ID its post answered, never by the name', async () => {
    fake.replies.push({ status: 200, json: { ok: true, channel: 'C0DEPLOYS', ts: '1712345678.000200' } });
    const receipt = await provider.send({ channel: '#deploys', text: 'first' }, ctx());
    expect(receipt).toMatchObject({ providerMessageId: '1712345678.000200', conversation: 'C0DEPLOYS' });
    const posted = {
      payload: { channel: '#deploys', text: 'first' },
      providerMessageId: receipt.providerMessageId!,
      conversation: receipt.conversation,
    };
    fake.replies.push(
      { status: 200, json: { ok: true, channel: 'C0DEPLOYS', ts: '1712345678.000200' } },
      { status: 200, json: { ok: true, channel: 'C0DEPLOYS', ts: '1712345678.000200' } },
    );
    const blocks = [{ type: 'header', text: { type: 'plain_text', text: 'second' } }];
    await provider.edit!(posted, { channel: '#deploys', text: 'second', blocks }, ctx());
    await provider.retract!(posted, ctx());
    const [update, del] = fake.requests.slice(-2);
    expect(update).toMatchObject({ path: '/chat.update', form: { channel: 'C0DEPLOYS', ts: '1712345678.000200', text: 'second' } });
    expect(JSON.parse(update!.form.blocks!)).toEqual(blocks);
    expect(del).toMatchObject({ path: '/chat.delete', form: { channel: 'C0DEPLOYS', ts: '1712345678.000200' } });
    // A #name post recorded without its ID (before it was kept) is refused, and nothing is requested.
    const before = fake.requests.length;
    await expect(
      provider.retract!({ payload: { channel: '#deploys', text: 'first' }, providerMessageId: '1712345678.000200' }, ctx()),
    ).rejects.toThrow(/by name before its channel ID was recorded/);
    expect(fake.requests.length).toBe(before);
  });

  it('opens the DM of a user ID, then posts there with the blocks as JSON', async () => {
    fake.replies.push(
      { status: 200, json: { ok: true, channel: { id: 'D0DM00001' } } },
      { status: 200, json: { ok: true, channel: 'D0DM00001', ts: '1712345678.000300' } },
    );
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*done*' } }];
    const receipt = await provider.send({ channel: 'U0123ABCD', text: 'done', blocks }, ctx());
    expect(receipt.providerMessageId).toBe('1712345678.000300');
    const [open, post] = fake.requests.slice(-2);
    expect(open!.path).toBe('/conversations.open');
    expect(open!.form).toMatchObject({ users: 'U0123ABCD' });
    expect(post!.path).toBe('/chat.postMessage');
    expect(post!.form).toMatchObject({ channel: 'D0DM00001', text: 'done' });
    expect(JSON.parse(post!.form!.blocks!)).toEqual(blocks);
  });

  it('posts nothing when the DM cannot be opened, and says so as a rejection', async () => {
    const before = fake.requests.length;
    fake.replies.push({ status: 200, json: { ok: false, error: 'user_not_found' } });
    const err = await caught(provider.send({ channel: 'U0NOONE00', text: 'x' }, ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(fake.requests.slice(before).map((r) => r.path)).toEqual(['/conversations.open']);
  });

  it('maps ok:false channel_not_found to ProviderRejectedError', async () => {
    fake.replies.push({ status: 200, json: { ok: false, error: 'channel_not_found' } });
    const err = await caught(provider.send({ channel: '#nowhere', text: 'x' }, ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).vendorCode).toBe('channel_not_found');
    expect((err as Error).message).toContain('#nowhere');
  });

  it('maps ok:false not_in_channel to ProviderRejectedError telling to /invite the bot, never retried', async () => {
    fake.replies.push({ status: 200, json: { ok: false, error: 'not_in_channel' } }, ok);
    const before = fake.requests.length;
    const err = await caught(
      sendWithRetry(provider, { channel: 'C0999', text: 'x' }, { notificationId: 'ntf_nic', budgetMs: 5_000, log: silentLogger }),
    );
    expect((err as NotifyError).code).toBe('PROVIDER_REJECTED');
    expect((err as Error).message).toContain('/invite');
    expect(fake.requests.length - before).toBe(1);
    fake.replies.length = 0;
  });

  it('maps ok:false invalid_auth to ProviderRejectedError for the operator', async () => {
    fake.replies.push({ status: 200, json: { ok: false, error: 'invalid_auth' } });
    const err = await caught(provider.send({ channel: 'C0123ABCD', text: 'x' }, ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as Error).message).toContain('SLACK_BOT_TOKEN');
  });

  it('retries a 429 after its Retry-After, then succeeds', async () => {
    fake.replies.push({ status: 429, headers: { 'retry-after': '2' }, json: { ok: false, error: 'ratelimited' } }, ok);
    const before = fake.requests.length;
    const sleeps: number[] = [];
    const out = await sendWithRetry(
      provider,
      { channel: 'C0123ABCD', text: 'x' },
      {
        notificationId: 'ntf_429',
        budgetMs: 10_000,
        log: silentLogger,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
      },
    );
    expect(out.attempts).toBe(2);
    expect(out.receipt.providerMessageId).toBe('1712345678.000100');
    expect(sleeps).toEqual([2000]);
    expect(out.history[0]).toMatchObject({ outcome: 'rate_limited', vendorCode: 429 });
    expect(fake.requests.length - before).toBe(2);
  });

  it('answers RATE_LIMITED with retry_after_s when Retry-After is beyond the budget', async () => {
    fake.replies.push({ status: 429, headers: { 'retry-after': '60' }, json: { ok: false, error: 'ratelimited' } });
    const err = await caught(
      sendWithRetry(provider, { channel: 'C0123ABCD', text: 'x' }, { notificationId: 'ntf_429b', budgetMs: 3_000, log: silentLogger }),
    );
    expect((err as NotifyError).code).toBe('RATE_LIMITED');
    expect((err as NotifyError).details.retryAfterS).toBe(60);
    expect(sendFailureInfo(err)?.attempts).toBe(1);
  });

  it('maps HTTP 503 to ProviderTransientError', async () => {
    fake.replies.push({ status: 503, headers: { 'retry-after': '1' }, json: {} });
    const err = await caught(provider.send({ channel: 'C0123ABCD', text: 'x' }, ctx()));
    expect(err).toBeInstanceOf(ProviderTransientError);
    expect((err as ProviderTransientError).opts.retryAfterMs).toBe(1000);
  });

  it('maps a hang past the client timeout to DeliveryUnknownError', async () => {
    const quick = await createSlackProvider({ token: TOKEN, apiUrl: fake.origin, timeoutMs: 300, log: silentLogger });
    fake.replies.push('hang');
    const err = await caught(quick.send({ channel: 'C0123ABCD', text: 'x' }, ctx()));
    expect(err).toBeInstanceOf(DeliveryUnknownError);
  });

  it('maps a hang past the send budget to DELIVERY_UNKNOWN without a second request', async () => {
    fake.replies.push('hang', ok);
    const before = fake.requests.length;
    const err = await caught(
      sendWithRetry(provider, { channel: 'C0123ABCD', text: 'x' }, { notificationId: 'ntf_hang', budgetMs: 500, log: silentLogger }),
    );
    expect((err as NotifyError).code).toBe('DELIVERY_UNKNOWN');
    expect(fake.requests.length - before).toBe(1);
    fake.replies.length = 0;
  });

  it('maps a refused connection to ProviderTransientError, and PROVIDER_UNAVAILABLE past the budget', async () => {
    const port = await freePort();
    const nowhere = await createSlackProvider({ token: TOKEN, apiUrl: `http://127.0.0.1:${port}`, timeoutMs: 1_000, log: silentLogger });
    const err = await caught(nowhere.send({ channel: 'C0123ABCD', text: 'x' }, ctx()));
    expect(err).toBeInstanceOf(ProviderTransientError);
    expect((err as ProviderTransientError).vendorCode).toBe('ECONNREFUSED');
    // That it stops at the budget is retry.test's, on a clock of its own; here, that it gives up at all.
    const gaveUp = await caught(
      sendWithRetry(nowhere, { channel: 'C0123ABCD', text: 'x' }, { notificationId: 'ntf_down', budgetMs: 1_000, log: silentLogger }),
    );
    expect((gaveUp as NotifyError).code).toBe('PROVIDER_UNAVAILABLE');
    expect(sendFailureInfo(gaveUp)!.attempts).toBeGreaterThan(1);
  });
});
