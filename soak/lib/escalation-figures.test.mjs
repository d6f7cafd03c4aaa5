/**
 * `node --import ./test/register.mjs --test soak/lib/escalation-figures.test.mjs`: the
 * escalation invariant (figures.mjs, issue 39) flags each break it names, and passes what is
 * allowed; the fakes count a step by its first send and keep the links it carries. Not part of
 * `npm test`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerTokensIn, mimeText, startTwilio } from './fakes.mjs';
import { ANSWER_MARGIN_MS, escalationFigures } from './figures.mjs';

const T = Date.UTC(2026, 11, 6, 12);
const iso = (ms) => new Date(ms).toISOString();
const policies = { page: ['slack', 'sms', 'email'], mail: ['email', 'slack'] };
/** First send `n` (policy `policy`), acknowledged sent at T + n s. */
const send = (n, policy = 'mail') => ({ kind: 'send', token: `sk0x${n}`, escalate: policy, code: 'OK', structured: { id: `r${n}`, status: 'sent', accepted_at: iso(T + n * 1000) } });
/** Step `i` of first send `n`, due `dueMs` after it. */
const step = (n, i, via, dueMs, state, code) => ({ id: `r${n}s${i}`, via, to: ['x'], due_at: iso(T + n * 1000 + dueMs), state, ...(code ? { code } : {}) });
const read = (escalation, answer) => ({ code: 'OK', status: 'sent', escalation, ...(answer ? { answer: { choice: answer, by: 'link', via: 'email', at: iso(T) } } : {}) });
/** An answer POST to first send `n`, acknowledged at T + n s + `endMs`. */
const post = (n, choice, endMs, outcome = 'recorded', shown = choice) => ({ kind: 'answer', root: `r${n}`, choice, start: T + n * 1000 + endMs - 20, end: T + n * 1000 + endMs, outcome, shown, dues: [] });
const audit = (seq, kind, id, at = T) => ({ seq, kind, notification_id: id, at: iso(at) });

/** Every class once, agreeing: r1 unanswered (both steps sent), r2 answered before its second step (cancelled), r3 unknown then failed by its provider. */
function healthy() {
  return {
    sends: [send(1), send(2), send(3), { kind: 'send', token: 'sk0x9', escalate: 'mail', code: 'PROVIDER_UNAVAILABLE' }],
    policies,
    answers: [post(2, 'ack', 3_500), post(2, 'defer', 3_600, 'answered', 'ack')],
    finals: new Map([
      ['r1', read([step(1, 1, 'email', 3_000, 'sent'), step(1, 2, 'slack', 5_000, 'sent')])],
      ['r2', read([step(2, 1, 'email', 3_000, 'sent'), step(2, 2, 'slack', 5_000, 'cancelled')], 'ack')],
      ['r3', read([step(3, 1, 'email', 3_000, 'unknown'), step(3, 2, 'slack', 5_000, 'failed', 'PROVIDER_UNAVAILABLE')])],
    ]),
    steps: new Map([
      ['r1', new Map([['email', 1], ['slack', 1]])],
      ['r2', new Map([['email', 1]])],
    ]),
    audit: [audit(1, 'outbox.releasing', 'r2s1'), audit(2, 'question.answered', 'r2'), audit(3, 'outbox.releasing', 'r1s1')],
    windows: [{ label: 'store fault', from: T + 4_000, to: T + 6_500, mustCover: true }],
  };
}
const run = (change = {}) => escalationFigures({ ...healthy(), ...change });
const flags = (r, re) => assert.match(r.breaks.join('\n'), re);

test('every allowed end passes, and adds up to steps = sent + cancelled + unknown + failed', () => {
  const r = run();
  assert.deepEqual(r.breaks, []);
  assert.equal(r.figures.invariant, 'steps 6 = sent 3 + cancelled 1 + unknown 1 + failed 1');
  assert.deepEqual(r.figures.final, { sent: 3, cancelled: 1, unknown: 1, failed: 1, expired: 0, waiting: 0, other: 0 });
  assert.equal(r.figures.answered, 1);
  assert.equal(r.figures.steps_due_after_an_answer, 1);
  assert.deepEqual(r.figures.due_in_fault_windows['store fault'], { due: 4, sent: 3, unknown: 1 });
});

test('a first send acknowledged sent without its policy\'s steps breaks the run', () => {
  const finals = new Map(healthy().finals);
  finals.set('r1', read([step(1, 1, 'email', 3_000, 'sent')]));
  flags(run({ finals, steps: new Map([['r1', new Map([['email', 1]])], ['r2', new Map([['email', 1]])]]) }), /1 escalated sends acknowledged sent \(or DELIVERY_UNKNOWN\) do not list their policy's steps/);
});

test('a step still waiting, expired outside a store fault, released without a record, or failed for a reason not its provider\'s breaks the sum', () => {
  const finals = new Map(healthy().finals);
  finals.set('r3', read([step(3, 1, 'email', 3_000, 'expired'), step(3, 2, 'slack', 5_000, 'failed', 'CAP_REACHED')]));
  finals.set('r1', read([step(1, 1, 'email', 3_000, 'scheduled'), step(1, 2, 'slack', 5_000, 'released')]));
  const windows = [{ label: 'providers hang (15%)', from: T + 4_000, to: T + 6_500, mustCover: false }];
  const r = run({ finals, windows, steps: new Map([['r2', new Map([['email', 1]])]]), audit: [audit(1, 'outbox.scheduled', 'r3s1', T + 3_000 + 9_000), audit(2, 'outbox.expired', 'r3s1', T + 3_000 + 14_000)] });
  flags(r, /4 steps ended neither sent, cancelled, unknown nor failed by their provider \(e\.g\. r1s1 .*scheduled/);
  flags(r, /r3s1 \(email step of r3\): expired, written 6000 ms after its due time, expired at a claim 11000 ms after it/);
  flags(r, /steps 6 != sent 1 \+ cancelled 1 \+ unknown 0 \+ failed by the provider 0 \+ expired under a store fault 0: 4 not accounted for/);
  assert.deepEqual(r.figures.kept_after_due, { steps: 1, max_ms: 6_000 });
});

test('a step expired within its grace of a store fault is accounted for apart, and the sum holds', () => {
  const finals = new Map(healthy().finals);
  // Due at T + 6 s, inside the store fault (T + 4 s to T + 6.5 s): no release could claim it within its 5 s grace.
  finals.set('r3', read([step(3, 1, 'email', 3_000, 'expired'), step(3, 2, 'slack', 5_000, 'failed', 'PROVIDER_UNAVAILABLE')]));
  const r = run({ finals });
  assert.deepEqual(r.breaks, []);
  assert.equal(r.figures.invariant, 'steps 6 = sent 3 + cancelled 1 + unknown 0 + failed 1 (+ expired under a store fault 1)');
  // The same step, with the fault long over by its due time, breaks the run.
  flags(run({ finals, graceMs: 1_000, windows: [{ label: 'store fault', from: T, to: T + 1_000, mustCover: false }] }), /r3s1 \(email step of r3\): expired/);
});

test('a step delivered twice, a sent one never delivered, a cancelled or failed one delivered: each breaks the run', () => {
  const steps = new Map([
    ['r1', new Map([['email', 2]])],
    ['r2', new Map([['email', 1], ['slack', 1]])],
    ['r3', new Map([['slack', 1]])],
  ]);
  const r = run({ steps });
  flags(r, /1 steps reached their provider more than once \(e\.g\. r1s1/);
  flags(r, /2 steps read sent did not reach their provider exactly once \(e\.g\. r1s1 .*2 deliveries, r1s2 .*0 deliveries/);
  flags(r, /2 steps read cancelled or failed reached their provider \(e\.g\. r2s2 .*, r3s2/);
});

test('a first send answered DELIVERY_UNKNOWN may have left: its steps go on, are read and checked as any; one answered another error is an orphan', () => {
  const unknownSend = { kind: 'send', token: 'sk0x4', escalate: 'mail', code: 'DELIVERY_UNKNOWN', structured: { error: { code: 'DELIVERY_UNKNOWN', notification_id: 'r4' } } };
  const finals = new Map(healthy().finals);
  finals.set('r4', read([step(4, 1, 'email', 3_000, 'sent'), step(4, 2, 'slack', 5_000, 'sent')]));
  const steps = new Map([...healthy().steps, ['r4', new Map([['email', 1], ['slack', 1]])]]);
  const r = run({ sends: [...healthy().sends, unknownSend], finals, steps });
  assert.deepEqual(r.breaks, []);
  assert.equal(r.figures.steps, 8);
  // The same steps delivered for a first send its caller was told failed.
  flags(run({ sends: [...healthy().sends, { ...unknownSend, code: 'PROVIDER_REJECTED', structured: { error: { code: 'PROVIDER_REJECTED', notification_id: 'r4' } } }], finals, steps }), /r4: email\/slack step delivered for a first send not acknowledged/);
});

test('a step delivery for a step not listed, or for a first send never acknowledged, breaks the run', () => {
  const steps = new Map(healthy().steps);
  steps.set('r9', new Map([['sms', 1]]));
  steps.set('r2', new Map([['email', 1], ['sms', 1]]));
  flags(run({ steps }), /2 step deliveries belong to no step listed/);
});

test(`a step due more than ${ANSWER_MARGIN_MS} ms after an acknowledged answer that left, or was not cancelled, breaks the run; one within the margin may leave`, () => {
  const finals = new Map(healthy().finals);
  // Acknowledged 4,997 ms after the first send: the slack step (5,000) is within the margin, so it may leave.
  finals.set('r2', read([step(2, 1, 'email', 3_000, 'sent'), step(2, 2, 'slack', 5_000, 'sent')], 'ack'));
  const steps = new Map([...healthy().steps, ['r2', new Map([['email', 1], ['slack', 1]])]]);
  assert.deepEqual(run({ finals, steps, answers: [post(2, 'ack', 5_000 - ANSWER_MARGIN_MS + 2)] }).breaks, []);
  const late = run({ finals, steps, answers: [post(2, 'ack', 5_000 - ANSWER_MARGIN_MS - 1)] });
  flags(late, /1 steps due more than 5 ms after an answer was acknowledged were not cancelled, or left \(e\.g\. r2s2 .*due 6 ms after/);
  // Cancelled in its state but delivered all the same.
  const delivered = run({ steps, answers: [post(2, 'ack', 3_500)] });
  flags(delivered, /steps due more than 5 ms after an answer was acknowledged were not cancelled, or left/);
});

test('a step cancelled though its first send was never answered breaks the run', () => {
  const finals = new Map(healthy().finals);
  finals.set('r1', read([step(1, 1, 'email', 3_000, 'sent'), step(1, 2, 'slack', 5_000, 'cancelled')]));
  flags(run({ finals, steps: new Map([['r1', new Map([['email', 1]])], ['r2', new Map([['email', 1]])]]) }), /1 steps were cancelled though their first send was never answered/);
});

test('an answer other than the first kept, or two recorded, breaks the run', () => {
  const cases = [
    // Two POSTs both told they recorded.
    [post(2, 'ack', 3_500), post(2, 'defer', 3_500)],
    // The recorded one is not what get_notification reads.
    [post(2, 'defer', 3_500)],
    // A later answer shown a choice that is not the one kept.
    [post(2, 'ack', 3_500), post(2, 'resolve', 3_600, 'answered', 'defer')],
    // Read answered, though no POST could have recorded it.
    [post(2, 'ack', 3_600, 'answered', 'ack')],
  ];
  for (const answers of cases) flags(run({ answers }), /1 escalations did not keep their first answer/);
  const finals = new Map(healthy().finals);
  finals.set('r2', { ...finals.get('r2'), answer: { choice: 'ack', by: 'U123', via: 'slack', at: iso(T) } });
  flags(run({ finals }), /answered by U123, not by a link/);
  flags(run({ audit: [...healthy().audit, audit(4, 'question.answered', 'r2')] }), /r2: 2 answers in the audit chain/);
  // An answer whose POST got no clear answer may be the one kept.
  assert.deepEqual(run({ answers: [{ ...post(2, 'ack', 3_500), outcome: 'HTTP_503' }] }).breaks, []);
});

test('a step first claimed after its first send\'s answer in the audit chain breaks the run; an unread chain is a break too', () => {
  const chain = [audit(1, 'question.answered', 'r2'), audit(2, 'outbox.releasing', 'r2s1')];
  flags(run({ audit: chain }), /1 steps were claimed after their first send's answer \(audit chain order\) \(e\.g\. r2s1 .*seq 2, answered at 1/);
  flags(run({ audit: undefined }), /the audit chain could not be read/);
});

test('an answer POST with no answer or a 5xx other than 503 breaks the run; no step due in the store fault breaks it', () => {
  const answers = [...healthy().answers, { ...post(2, 'ack', 3_700), outcome: 'NO_ANSWER:ECONNRESET' }, { ...post(2, 'ack', 3_800), outcome: 'HTTP_500' }];
  flags(run({ answers }), /2 answer POSTs got no answer or a 5xx other than 503/);
  flags(run({ windows: [{ label: 'store fault', from: T + 60_000, to: T + 61_000, mustCover: true }] }), /no escalation step fell due during "store fault"/);
});

test('the fakes count a step by its first send, apart from the token its text carries, and keep the links of both', async () => {
  const twilio = await startTwilio();
  const link = (c) => `http://127.0.0.1:1/answer/${c.repeat(43)}`;
  try {
    twilio.receive(`soak sk1x1 ok soakv0 ${link('a')}`, 0);
    twilio.receive(`Escalates ntf_0a1b: soak sk1x1 ok soakv0 ${link('b')}`, 0);
    assert.deepEqual([...twilio.delivered], [['sk1x1', 1]]);
    assert.deepEqual([...twilio.steps], [['ntf_0a1b', 1]]);
    assert.deepEqual([...twilio.links.get('sk1x1')], ['a'.repeat(43)]);
    assert.deepEqual([...twilio.links.get('ntf_0a1b')], ['b'.repeat(43)]);
  } finally {
    await twilio.close();
  }
  // A quoted-printable HTML part: a soft line break inside the token, `=` encoded.
  const qp = `<a href=3D"http://h/answer/${'c'.repeat(20)}=\r\n${'c'.repeat(23)}">x</a>`;
  assert.deepEqual(answerTokensIn(mimeText(qp)), ['c'.repeat(43)]);
});
