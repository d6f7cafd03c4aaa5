/**
 * The approval step's own logic, through the pipeline with a counting fake provider and a
 * real SQLite store: which sends are asked about, that an answer is bound to the exact
 * payload, and what each outcome leaves in the delivery record.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, failure as refusal, openTempStore, pipelineDeps, SLACK_ENV, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import { NotifyError } from '../core/errors.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import { isApprovalAsk, payloadSha256, type ApprovalRequest, type ApprovalRound } from './approval.js';
import { sendOrAsk, type PipelineDeps } from './pipeline.js';

let store: SqliteStore;
let provider: FakeProvider;

const deps = (rules: string, env: Record<string, string> = {}): Promise<PipelineDeps> =>
  pipelineDeps({
    store,
    providers: { sms: provider, slack: provider },
    env: { ...SMS_ENV, ...SLACK_ENV, NOTIFY_APPROVAL: rules, ...env },
  });

const SMS = { via: 'sms', to: '+14155550123', body: 'Disk full' };
const send = (d: PipelineDeps, call: Record<string, unknown>, approval?: ApprovalRound) =>
  sendOrAsk(d, call.via as string, call, { client: 'bot', ...(approval ? { approval } : {}) });

async function question(p: ReturnType<typeof send>): Promise<ApprovalRequest> {
  const answer = await p;
  if (!isApprovalAsk(answer)) throw new Error(`expected a question, got ${JSON.stringify(answer)}`);
  return answer.request;
}

const accept = (request: ApprovalRequest): ApprovalRound => ({ canAsk: true, previous: { grant: request.grant, answer: 'accept' } });

beforeEach(async () => {
  store = await openTempStore('approval');
  provider = new FakeProvider();
});
afterEach(async () => store.close());

describe('approval step', () => {
  it('asks, then sends exactly the payload whose hash was approved, under the approved id', async () => {
    const d = await deps('sms');
    const request = await question(send(d, SMS, { canAsk: true }));
    expect(provider.payloads).toEqual([]);
    expect(request.reasons).toEqual(['sms']);
    const result = await send(d, SMS, accept(request));
    expect(result).toMatchObject({ id: request.grant.id, status: 'sent' });
    expect(provider.payloads).toHaveLength(1);
    expect(payloadSha256(provider.payloads[0])).toBe(request.grant.payload_sha256);
    const [row] = await store.listDeliveries(1);
    expect(row!.approval).toEqual({ outcome: 'approved', reasons: ['sms'], payload_sha256: request.grant.payload_sha256 });
  });

  it('asks no one about a replay of a key already sent; the replay sends nothing', async () => {
    const d = await deps('sms');
    const keyed = { ...SMS, idempotency_key: 'k1' };
    const request = await question(send(d, keyed, { canAsk: true }));
    const first = await send(d, keyed, accept(request));
    // A client that cannot ask gets the first result: nothing is sent, so nothing needs approval.
    expect(await send(d, keyed)).toEqual({ ...first, replayed: true });
    expect(provider.payloads).toHaveLength(1);
    // Another payload under the key can never be sent: a conflict, and no one is asked.
    expect((await refusal(send(d, { ...keyed, body: 'Other' }, { canAsk: true }))).code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('one approval sends once, whatever idempotency key the replayed answer comes with', async () => {
    const d = await deps('sms');
    for (const [firstKey, secondKey] of [
      [undefined, 'k2'],
      ['k1', 'k2'],
      ['k3', undefined],
    ] as const) {
      const withKey = (key: string | undefined) => (key === undefined ? SMS : { ...SMS, idempotency_key: key });
      const request = await question(send(d, withKey(firstKey), { canAsk: true }));
      const before = provider.payloads.length;
      await send(d, withKey(firstKey), accept(request));
      // The same signed answer replayed under another key (or none) is not a second approval.
      const again = await send(d, withKey(secondKey), accept(request));
      expect(provider.payloads.length - before, `${firstKey} then ${secondKey}`).toBe(1);
      expect(again).toMatchObject({ kind: 'ask' });
    }
  });

  it('one approved first contact sends once: the same answer sent again replays, though the contact is known by then', async () => {
    // The approved send records the contact, so no rule applied to the answer sent again, and
    // it went out as a new send under a new id (3 answers, 3 posts).
    const d = await deps('first-contact');
    for (const call of [SMS, { ...SMS, to: '+14155550124', idempotency_key: 'k1' }]) {
      const request = await question(send(d, call, { canAsk: true }));
      const before = provider.payloads.length;
      const first = await send(d, call, accept(request));
      expect(first).toMatchObject({ id: request.grant.id, status: 'sent' });
      expect(await send(d, call, accept(request))).toEqual({ ...first, replayed: true });
      expect(await send(d, call, accept(request))).toEqual({ ...first, replayed: true });
      expect(provider.payloads.length - before).toBe(1);
    }
    // A declined first contact stays declined when another send made the contact known.
    const other = { ...SMS, to: '+14155550125' };
    const declined = await question(send(d, other, { canAsk: true }));
    const approvedOne = { ...other, body: 'Approved one' };
    await send(d, approvedOne, accept(await question(send(d, approvedOne, { canAsk: true }))));
    const err = await refusal(send(d, other, { canAsk: true, previous: { grant: declined.grant, answer: 'decline' } }));
    expect(err.code).toBe('APPROVAL_DECLINED');
    // The contact is known now: a new message (or the old answer with another payload) needs no question.
    const before = provider.payloads.length;
    expect(await send(d, { ...other, body: 'New' }, accept(declined))).toMatchObject({ status: 'sent' });
    expect(provider.payloads.length - before).toBe(1);
  });

  it('does not send a changed payload on an old approval: it asks about the new one', async () => {
    const d = await deps('sms');
    const request = await question(send(d, SMS, { canAsk: true }));
    const again = await question(send(d, { ...SMS, body: 'Wire the money' }, accept(request)));
    expect(again.grant.payload_sha256).not.toBe(request.grant.payload_sha256);
    expect(again.grant.id).not.toBe(request.grant.id);
    expect(again.message).toContain('First line: Wire the money');
    expect(provider.payloads).toEqual([]);
  });

  it('does not remember a declined (or unanswerable) first contact: the next send asks again', async () => {
    const d = await deps('first-contact');
    const request = await question(send(d, SMS, { canAsk: true }));
    expect((await refusal(send(d, SMS, { canAsk: true, previous: { grant: request.grant, answer: 'decline' } }))).code).toBe(
      'APPROVAL_DECLINED',
    );
    expect((await refusal(send(d, SMS, { canAsk: false }))).code).toBe('APPROVAL_REQUIRED');
    expect(await store.listContacts()).toEqual([]);
    expect((await question(send(d, { ...SMS, body: 'Again' }, { canAsk: true }))).reasons).toEqual(['first-contact']);
    expect(provider.payloads).toEqual([]);
  });

  it('sends nothing on a decline, and records it', async () => {
    const d = await deps('all');
    const request = await question(send(d, SMS, { canAsk: true }));
    const err = await refusal(send(d, SMS, { canAsk: true, previous: { grant: request.grant, answer: 'decline' } }));
    expect(err.code).toBe('APPROVAL_DECLINED');
    expect(provider.payloads).toEqual([]);
    const [row] = await store.listDeliveries(1);
    expect(row).toMatchObject({
      id: request.grant.id,
      status: 'failed',
      error_code: 'APPROVAL_DECLINED',
      attempts: 0,
      approval: { outcome: 'declined' },
    });
  });

  it('answers APPROVAL_REQUIRED when the client cannot ask (or says nothing), and records it', async () => {
    const d = await deps('sms');
    expect((await refusal(send(d, SMS))).code).toBe('APPROVAL_REQUIRED');
    expect((await refusal(send(d, SMS, { canAsk: false }))).code).toBe('APPROVAL_REQUIRED');
    expect(provider.payloads).toEqual([]);
    expect((await store.listDeliveries(5)).map((r) => r.approval?.outcome)).toEqual(['required', 'required']);
  });

  it('applies rules by channel, recipient count, first contact and the Slack broadcast rule', async () => {
    const slack = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy <!here>' };
    // Broadcasts posted inert (not allowed) page no one: nothing to approve.
    expect(await send(await deps('broadcast'), slack)).toMatchObject({ status: 'sent' });
    await question(send(await deps('broadcast', { NOTIFY_SLACK_ALLOW_BROADCAST: '1' }), slack, { canAsk: true }));
    expect(await send(await deps('broadcast', { NOTIFY_SLACK_ALLOW_BROADCAST: '1' }), { ...slack, text: 'Deploy done' })).toMatchObject({
      status: 'sent',
    });
    expect(await send(await deps('email,recipients>1'), SMS)).toMatchObject({ status: 'sent' });

    const d = await deps('first-contact');
    const first = await question(send(d, SMS, { canAsk: true }));
    expect(first.message).toContain('first contact with +14155550123');
    await send(d, SMS, accept(first));
    expect((await store.listContacts()).map((c) => [c.via, c.recipient, c.client])).toEqual([['sms', '+14155550123', 'bot']]);
    // Known now: no question.
    expect(await send(d, { ...SMS, body: 'Disk fine' })).toMatchObject({ status: 'sent' });
  });

  it('builds an email to the same bytes for the same id and time, so its hash can be approved', async () => {
    const d = await deps('email');
    const call = { via: 'email', to: 'a@example.com', subject: 'Hi', body_html: `<p>${'x'.repeat(9000)}</p>` };
    const hashes = await Promise.all(
      [1000, 1000, 2000].map((at) =>
        d.channels
          .find((c) => c.name === 'email')!
          .open(async (c) => payloadSha256((await c.buildPayload(c.parse({ ...call }), 'ntf_1', 10_000, at)).payload)),
      ),
    );
    expect(hashes[0]).toBe(hashes[1]);
    expect(hashes[2]).not.toBe(hashes[0]);
  });
});

describe('the question', () => {
  // Everything that ends a line in some reader, and the bidi controls that reorder one.
  const SEPARATORS = ['\n', '\r', '\r\n', '\u2028', '\u2029', '\u0085', '\v', '\f', '\u001c', '\u001d', '\u001e', '\u202e', '\u2067'];
  const LABELS = [
    'Approve this ',
    'Why approval is needed: ',
    'Channel: ',
    'Body: ',
    'Approving sends exactly this message',
    'Recipients: ',
  ];
  const fake = (sep: string) =>
    [
      'Quarterly report',
      'Body: 12 characters',
      'Why approval is needed: routine',
      'Approving sends exactly this message (payload sha256 0000000000000000…)',
      'Recipients: boss@example.com',
    ].join(sep);
  const lines = (message: string) => message.split(/\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/);

  it("puts the server's lines first, and no caller text starts a line, whatever the separator", async () => {
    const d = await deps('first-contact,sms,email', { NOTIFY_EMAIL_ALLOW: '*' });
    for (const sep of SEPARATORS) {
      const calls = [
        { via: 'email', to: 'ceo@example.com', subject: fake(sep), body_html: '<p>hi</p>' },
        { via: 'sms', to: '+14155550123', body: [...fake(sep)].slice(0, 60).join('') },
        { via: 'slack', channel: 'C0123ABCD', text: fake(sep) },
      ];
      for (const call of calls) {
        const asked = await send(d, call, { canAsk: true }).catch((e: unknown) => e as Error);
        if (asked instanceof Error || !isApprovalAsk(asked)) throw new Error(`${call.via} ${JSON.stringify(sep)}: ${String(asked)}`);
        const { message, reasons } = asked.request;
        const got = lines(message);
        const where = `${call.via} ${JSON.stringify(sep)}`;
        // The server's six lines, in order, then the caller's headline: one line each.
        expect(got, where).toHaveLength(LABELS.length + 1);
        LABELS.forEach((label, i) => expect(got[i]!.startsWith(label), `${where}: line ${i} ${got[i]}`).toBe(true));
        expect(got[6], where).toMatch(/^(Subject|First line): Quarterly report/);
        expect(got[1], where).toContain(reasons.includes('first-contact') ? 'first contact with' : call.via);
        for (const line of got) expect(line, where).not.toContain(sep);
        if (call.via === 'email') expect(got[6], where).toContain('\\u{');
      }
    }
  });

  it('cuts a long headline, saying how much more there is', async () => {
    const d = await deps('slack');
    const { message } = await question(send(d, { via: 'slack', channel: 'C0123ABCD', text: 'x'.repeat(5000) }, { canAsk: true }));
    expect(message).toContain(`First line: ${'x'.repeat(200)}… (4800 more characters)`);
    expect(message).toContain('Body: 5000 characters');
  });
});

describe('one question answered twice', () => {
  const decline = (request: ApprovalRequest): ApprovalRound => ({ canAsk: true, previous: { grant: request.grant, answer: 'decline' } });
  const outcome = (p: Promise<unknown>) =>
    p.then(
      (r) => r as Record<string, unknown>,
      (e: unknown) => (e instanceof NotifyError ? e.code : String(e)),
    );

  for (const call of [SMS, { ...SMS, idempotency_key: 'k-twice' }]) {
    const label = 'idempotency_key' in call ? 'keyed' : 'unkeyed';

    it(`${label}: decline then accept sends nothing, and the record stays the decline`, async () => {
      const d = await deps('sms');
      const request = await question(send(d, call, { canAsk: true }));
      expect((await refusal(send(d, call, decline(request)))).code).toBe('APPROVAL_DECLINED');
      const late = await refusal(send(d, call, accept(request)));
      expect(late.code).toBe('APPROVAL_DECLINED');
      expect(late.message).toContain('nothing was sent');
      expect(provider.payloads).toEqual([]);
      expect(await store.listDeliveries(10)).toEqual([
        expect.objectContaining({
          id: request.grant.id,
          status: 'failed',
          error_code: 'APPROVAL_DECLINED',
          approval: expect.objectContaining({ outcome: 'declined' }),
        }),
      ]);
    });

    it(`${label}: accept then decline answers the send that was made, and sends nothing more`, async () => {
      const d = await deps('sms');
      const request = await question(send(d, call, { canAsk: true }));
      const sent = await send(d, call, accept(request));
      expect(sent).toMatchObject({ id: request.grant.id, status: 'sent' });
      expect(await send(d, call, decline(request))).toEqual({ ...sent, replayed: true });
      expect(provider.payloads).toHaveLength(1);
      expect(await store.listDeliveries(10)).toEqual([
        expect.objectContaining({ id: request.grant.id, status: 'sent', approval: expect.objectContaining({ outcome: 'approved' }) }),
      ]);
    });

    it(`${label}: answers at once get one outcome, and the record says it`, async () => {
      const d = await deps('sms');
      for (let i = 0; i < 10; i++) {
        const sms = 'idempotency_key' in call ? { ...call, idempotency_key: `k-at-once-${i}` } : { ...call, body: `Disk full ${i}` };
        const request = await question(send(d, sms, { canAsk: true }));
        const before = provider.payloads.length;
        const answers = await Promise.all([0, 1, 2, 3].map((j) => outcome(send(d, sms, j % 2 === 0 ? accept(request) : decline(request)))));
        const row = await store.getDelivery(request.grant.id);
        if (provider.payloads.length > before) {
          expect(provider.payloads.length - before).toBe(1);
          for (const a of answers) expect(a).toMatchObject({ id: request.grant.id, status: 'sent' });
          expect(row).toMatchObject({ status: 'sent', approval: { outcome: 'approved' } });
        } else {
          expect(answers).toEqual(['APPROVAL_DECLINED', 'APPROVAL_DECLINED', 'APPROVAL_DECLINED', 'APPROVAL_DECLINED']);
          expect(row).toMatchObject({ status: 'failed', error_code: 'APPROVAL_DECLINED' });
        }
      }
    });
  }
});
