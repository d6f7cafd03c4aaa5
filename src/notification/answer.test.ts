/**
 * Answers through the send path and the answer use case, on a real SQLite store with a clock
 * of our own: the link each channel's payload carries, the question kept under its token's
 * hash only, the first answer winning, and every answer that must take nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, FakeSlack, openTempStore, pipelineDeps, SLACK_ENV } from '../../test/helpers/pipeline-kit.js';
import type { Config } from '../config/config.js';
import { tokenSha256 } from '../core/answer-token.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import { answerQuestion } from './answer.js';
import { decideApproval } from './decide-approval.js';
import { editNotification } from './edit.js';
import { sendNotification, type PipelineDeps } from './pipeline.js';

let store: SqliteStore;
let clock: number;
const BASE = 'https://notify.example.com';
const LINK = /https:\/\/notify\.example\.com\/answer\/([A-Za-z0-9_-]{43})/;

const deps = (env: Record<string, string> = {}): Promise<PipelineDeps & { config: Config }> =>
  pipelineDeps({
    store,
    providers: { slack: new FakeProvider('slack') },
    env: { NOTIFY_PUBLIC_URL: BASE, ...SLACK_ENV, ...env },
    now: () => clock,
  });

const EMAIL = {
  via: 'email',
  to: ['a@example.com', 'b@example.com'],
  subject: 'Deploy?',
  body_html: '<p>Ship <b>v2</b>?</p>',
  ask: { choices: ['Yes', 'No <later>'] },
};
const send = (d: PipelineDeps, call: Record<string, unknown>) => sendNotification(d, call.via as string, call, { client: 'bot' });
/** The MIME with quoted-printable's soft breaks and `=3D` undone, so a link reads whole. */
const unfolded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
const rawOf = async (id: string) => unfolded(((await store.getDelivery(id))!.payload as { raw: string }).raw);
const tokenIn = (text: string) => LINK.exec(text)?.[1];

beforeEach(async () => {
  store = await openTempStore('answers');
  clock = Date.UTC(2026, 5, 1);
});
afterEach(async () => store.close());

describe('answer links and the answer use case', () => {
  it('an email carries one link, escaped, in both parts; only its hash is kept; the first answer wins', async () => {
    const d = await deps();
    const sent = await send(d, EMAIL);
    const raw = await rawOf(sent.id);
    const token = tokenIn(raw)!;
    expect(token).toBeDefined();
    expect(raw).toMatch(/Content-Type: text\/plain[\s\S]*\/answer\/[\s\S]*Content-Type: text\/html/);
    const [text, html] = raw.split('Content-Type: text/html');
    expect(text).toContain('Answer (Yes / No <later>): https://notify.example.com/answer/');
    expect(html).toContain('Answer (Yes / No &lt;later&gt;)');
    expect(html).not.toContain('No <later>');
    expect(raw.match(new RegExp(token, 'g'))!.length).toBeGreaterThanOrEqual(3);
    const kept = JSON.stringify(store.db.prepare('SELECT * FROM question_tokens').all());
    expect(kept).toContain(tokenSha256(token));
    expect(kept).not.toContain(token);

    clock += 1_000;
    const first = await answerQuestion({ store, now: () => clock }, { token }, 'Yes', 'link', 'email');
    expect(first).toEqual({ kind: 'recorded', id: sent.id, answer: { choice: 'Yes', by: 'link', via: 'email', at: clock } });
    const second = await answerQuestion({ store, now: () => clock + 5 }, { token }, 'No <later>', 'link', 'email');
    expect(second).toEqual({ kind: 'answered', id: sent.id, answer: first.kind === 'recorded' ? first.answer : undefined });
    const kinds = (await store.auditFor(sent.id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'question.answered')).toHaveLength(1);
  });

  it('refuses a choice not offered, an expired question, an unknown or malformed token, and records nothing', async () => {
    const d = await deps();
    const sent = await send(d, { ...EMAIL, ask: { choices: ['Yes'], expires_in_s: 60 } });
    const token = tokenIn(await rawOf(sent.id))!;
    const answer = (t: { token: string } | { id: string }, choice: string, at = clock) =>
      answerQuestion({ store, now: () => at }, t, choice, 'link', 'email');
    expect(await answer({ token }, 'No')).toEqual({ kind: 'not_offered', id: sent.id, choices: ['Yes'] });
    // Another token of the same shape (its last character changed: never the same one).
    const other = `${token.slice(0, 42)}${token.endsWith('A') ? 'B' : 'A'}`;
    expect(await answer({ token: other }, 'Yes')).toEqual({ kind: 'unknown' });
    expect(await answer({ token: 'short' }, 'Yes')).toEqual({ kind: 'unknown' });
    expect(await answer({ id: 'ntf_none' }, 'Yes')).toEqual({ kind: 'unknown' });
    expect(await answer({ token }, 'Yes', clock + 60_000)).toEqual({ kind: 'expired', id: sent.id, expires_at: clock + 60_000 });
    expect((await store.getQuestion(sent.id))!.answer).toBeNull();
    expect((await store.auditFor(sent.id)).map((e) => e.kind)).not.toContain('question.answered');
    // Just inside its life it still takes one.
    expect((await answer({ token }, 'Yes', clock + 59_999)).kind).toBe('recorded');
  });

  it('an acknowledgement offers one choice; a question whose message has not left takes no answer', async () => {
    const d = await deps();
    const later = await send(d, { ...EMAIL, ask: {}, send_at: new Date(clock + 3_600_000).toISOString() });
    expect(later.status).toBe('scheduled');
    expect(await store.getQuestion(later.id)).toMatchObject({ choices: ['Acknowledge'], expires_in_s: 86_400 });
    expect(await answerQuestion({ store, now: () => clock }, { id: later.id }, 'Acknowledge', 'cli', 'cli')).toEqual({
      kind: 'not_sent',
      id: later.id,
    });
  });

  it('a send held for approval carries its link, and the approved release sends the same bytes', async () => {
    const d = await deps({ NOTIFY_APPROVAL: 'email', NOTIFY_APPROVAL_MODE: 'console' });
    const held = await send(d, EMAIL);
    expect(held.status).toBe('pending_approval');
    const row = (await store.getDelivery(held.id))!;
    const heldRaw = (row.payload as { raw: string }).raw;
    expect(tokenIn(unfolded(heldRaw))).toBeDefined();
    expect(await answerQuestion({ store, now: () => clock }, { token: tokenIn(unfolded(heldRaw))! }, 'Yes', 'link', 'email')).toEqual({
      kind: 'not_sent',
      id: held.id,
    });
    clock += 1_000;
    const decided = await decideApproval(d, held.id, { decision: 'approve', by: 'ops', seenSha256: row.approval!.payload_sha256 });
    expect(decided.status).toBe('approved');
    const released = (await store.getDelivery(held.id))!;
    expect(released.status).toBe('dry_run');
    expect((released.payload as { raw: string }).raw).toBe(heldRaw);
    expect(
      (await answerQuestion({ store, now: () => clock + 1 }, { token: tokenIn(unfolded(heldRaw))! }, 'Yes', 'link', 'email')).kind,
    ).toBe('recorded');
  });

  it('a Slack post carries its link in the text (and as a section with blocks)', async () => {
    const d = await deps();
    const sent = await send(d, { via: 'slack', channel: 'C0123ABCD', text: 'Deploy?', blocks: [{ type: 'divider' }], ask: {} });
    const payload = (await store.getDelivery(sent.id))!.payload as { text: string; blocks: { type: string; text?: { text: string } }[] };
    expect(payload.text).toMatch(/^Deploy\?\n\nAnswer \(Acknowledge\): <https:\/\/notify\.example\.com\/answer\/[A-Za-z0-9_-]{43}>$/);
    expect(payload.blocks.at(-1)?.text?.text).toBe(payload.text.split('\n\n')[1]);
  });

  it('keeps the question before the message leaves: a store that cannot keep it sends nothing', async () => {
    const slack = new FakeProvider('slack');
    const d = await pipelineDeps({ store, providers: { slack }, env: { NOTIFY_PUBLIC_URL: BASE, ...SLACK_ENV }, now: () => clock });
    const failing = new Proxy(store, {
      get: (target, key) => (key === 'recordQuestion' ? async () => Promise.reject(new Error('disk full')) : Reflect.get(target, key)),
    });
    const call = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy?', ask: {} };
    await expect(send({ ...d, store: failing }, call)).rejects.toThrow();
    expect(slack.payloads).toEqual([]);
    await send(d, call);
    expect(slack.payloads).toHaveLength(1);
  });

  it('an edited Slack post that asked keeps its question and the same link', async () => {
    const slack = new FakeSlack();
    const d = await pipelineDeps({ store, providers: { slack }, env: { NOTIFY_PUBLIC_URL: BASE, ...SLACK_ENV }, now: () => clock });
    const sent = await send(d, { via: 'slack', channel: 'C0123ABCD', text: 'Deploy?', ask: { choices: ['Yes', 'No'] } });
    const first = (slack.payloads[0] as { text: string }).text;
    const edited = await editNotification(d, { client: 'bot', operator: false, signal: new AbortController().signal }, sent.id, {
      text: 'Deploy v2?',
    });
    expect(edited).toMatchObject({ status: 'sent' });
    const next = (slack.edits[0]!.next as { text: string }).text;
    expect(next).toBe(`Deploy v2?${first.slice('Deploy?'.length)}`);
    expect(tokenIn(next)).toBe(tokenIn(first));
  });
});
