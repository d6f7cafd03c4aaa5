/**
 * `node --test soak/lib/held-figures.test.mjs`: the held-send and scheduled-edit invariants
 * (figures.mjs) flag what they name, and pass what is allowed. Not part of `npm test`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heldFigures, scheduledEditFigures } from './figures.mjs';

const held = (id, token) => ({ kind: 'held', token, code: 'OK', structured: { id, status: 'pending_approval' } });
const decision = (id, decision, version, outcome = 'accepted', postAt = 1000) => ({ kind: 'decision', id, decision, version, outcome, postAt, said: '' });
const edit = (id, version, code, status) => ({ kind: 'edit', id, version, start: 1000, code, ...(status ? { structured: { status } } : {}) });
const final = (status, extra = {}) => ({ code: 'OK', status, ...extra });

function run({ helds, edits = [], decisions = [], finals, versions, updates }) {
  return heldFigures({ helds, edits, decisions, finals: new Map(Object.entries(finals)), versions: new Map(Object.entries(versions ?? {})), updates: new Map(Object.entries(updates ?? {})) });
}

test('every allowed end passes, and is counted', () => {
  const r = run({
    helds: ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => held(x, `t${x}`)),
    edits: [edit('b', 1, 'OK', 'pending_approval'), edit('f', 1, 'OK', 'pending_approval'), edit('g', 1, 'ALREADY_SENT')],
    decisions: [decision('a', 'approve', 0), decision('b', 'approve', 0, 'stale'), decision('b', 'approve', 1), decision('c', 'decline', 0), decision('f', 'approve', 0), decision('g', 'approve', 0)],
    finals: { a: final('sent'), b: final('sent'), c: final('declined'), d: final('expired'), e: final('pending_approval'), f: final('pending_approval'), g: final('unknown') },
    versions: { ta: [0], tb: [1], tg: [0] },
  });
  assert.deepEqual(r.breaks, []);
  assert.deepEqual(r.figures.final, { sent: 2, declined: 1, expired: 1, failed: 0, unknown: 1, pending_approval: 2, other: 0 });
  assert.deepEqual(r.figures.pending_approval_why, { undecided: 1, edited_after_approval: 1 });
});

test('an edited text no decision approved that left breaks the run', () => {
  const r = run({
    helds: [held('a', 'ta')],
    edits: [edit('a', 1, 'OK', 'pending_approval')],
    decisions: [decision('a', 'approve', 0)],
    finals: { a: final('sent') },
    versions: { ta: [1] },
  });
  assert.match(r.breaks.join('\n'), /a text no accepted decision approved/);
});

test('the approved text leaving after an edit answered pending_approval breaks the run', () => {
  const r = run({
    helds: [held('a', 'ta')],
    edits: [edit('a', 1, 'OK', 'pending_approval')],
    decisions: [decision('a', 'approve', 0)],
    finals: { a: final('sent') },
    versions: { ta: [0] },
  });
  assert.match(r.breaks.join('\n'), /older than an edit answered pending_approval/);
});

test('a declined send delivered, a duplicate, a stuck approval, a failure without code, an edited approved post: each breaks the run', () => {
  const r = run({
    helds: ['a', 'b', 'c', 'd', 'e'].map((x) => held(x, `t${x}`)),
    decisions: [decision('a', 'decline', 0), decision('b', 'approve', 0), decision('c', 'approve', 0), decision('e', 'approve', 0)],
    finals: { a: final('declined'), b: final('sent'), c: final('approved'), d: final('failed'), e: final('sent') },
    versions: { ta: [0], tb: [0, 0], te: [0] },
    updates: { te: [1] },
  });
  const all = r.breaks.join('\n');
  for (const re of [/declined held sends reached a provider/, /more than once/, /no state the invariant allows/, /failed without an error code/, /approved Slack posts were edited/]) assert.match(all, re);
});

test('after an edit answered ALREADY_SENT, its text leaving breaks the run; a later edit answered pending_approval, approved, may leave', () => {
  const base = { helds: [held('a', 'ta')], decisions: [decision('a', 'approve', 0), decision('a', 'approve', 2)], finals: { a: final('sent') } };
  const refused = { ...edit('a', 1, 'ALREADY_SENT'), start: 1000, end: 1010 };
  const reopened = { ...edit('a', 2, 'OK', 'pending_approval'), start: 2000 };
  assert.deepEqual(run({ ...base, edits: [refused, reopened], versions: { ta: [2] } }).breaks, []);
  assert.match(run({ ...base, edits: [refused], decisions: [decision('a', 'approve', 0), decision('a', 'approve', 1)], versions: { ta: [1] } }).breaks.join('\n'), /edit 1 answered ALREADY_SENT, version 1 left/);
  // The reopening edit came before the refused one: no later edit reopened it.
  assert.match(run({ ...base, edits: [refused, { ...reopened, start: 500 }], versions: { ta: [2] } }).breaks.join('\n'), /edit 1 answered ALREADY_SENT, version 2 left/);
});

test('pending_approval though the last text was approved breaks the run', () => {
  const r = run({ helds: [held('a', 'ta')], decisions: [decision('a', 'approve', 0)], finals: { a: final('pending_approval') } });
  assert.match(r.breaks.join('\n'), /ended pending_approval though/);
});

test('scheduled edits: an edit answered scheduled whose text did not leave, or ALREADY_SENT whose text did, breaks the run', () => {
  const schedules = [{ token: 'ta', via: 'email' }, { token: 'tb', via: 'sms' }, { token: 'tc', via: 'slack' }];
  const ok = scheduledEditFigures({ schedules, edits: [{ ...edit('a', 1, 'OK', 'scheduled'), token: 'ta' }, { ...edit('b', 1, 'ALREADY_SENT'), token: 'tb' }, { ...edit('c', 1, 'OK', 'sent'), token: 'tc' }], versions: new Map([['ta', [1]], ['tb', [0]], ['tc', [0]]]), updates: new Map([['tc', [1]]]) });
  assert.deepEqual(ok.breaks, []);
  const bad = scheduledEditFigures({ schedules, edits: [{ ...edit('a', 1, 'OK', 'scheduled'), token: 'ta' }, { ...edit('b', 1, 'ALREADY_SENT'), token: 'tb' }, { ...edit('c', 1, 'OK', 'sent'), token: 'tc' }], versions: new Map([['ta', [0]], ['tb', [1]], ['tc', [0]]]) });
  assert.equal(bad.breaks.length, 3);
});
