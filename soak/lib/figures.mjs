/**
 * From the recorded answers and the fakes' ledgers to the figures and the invariants:
 * every answer a result or a coded error; every acknowledged send delivered exactly once;
 * nothing delivered that was not acknowledged, except answers of DELIVERY_UNKNOWN; every
 * scheduled send accounted for in its final state (scheduledFigures); RSS and the memory
 * reachable after a full GC flat over the second half.
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const mb = (b) => Math.round((b / 1024 / 1024) * 10) / 10;
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/**
 * Growth over the second half: the mean of the last quarter's samples against the third's,
 * within max(10% of the third quarter, floorBytes).
 */
function secondHalf(samples, floorBytes) {
  const n = samples.length;
  const q3 = samples.slice(Math.floor(n / 2), Math.floor((3 * n) / 4)).map((s) => s.bytes);
  const q4 = samples.slice(Math.floor((3 * n) / 4)).map((s) => s.bytes);
  const growth = mean(q4) - mean(q3);
  const tolerance = Math.max(0.1 * mean(q3), floorBytes);
  return {
    samples: n,
    q3_mean_mb: mb(mean(q3)),
    q4_mean_mb: mb(mean(q4)),
    growth_mb: mb(growth),
    tolerance_mb: mb(tolerance),
    /** A few points over time, for the report. */
    timeline_mb: Array.from({ length: 6 }, (_, i) => samples[Math.min(n - 1, Math.floor((i * (n - 1)) / 5))]).map((s) => [Math.round(s.t / 1000), mb(s.bytes)]),
    ok: n >= 8 && growth <= tolerance,
  };
}

/** RSS growth over the second half: mean of the last quarter against the third quarter. */
export function rssFigures(samples) {
  const bytes = samples.map((s) => s.bytes);
  return { min_mb: mb(Math.min(...bytes)), max_mb: mb(Math.max(...bytes)), ...secondHalf(samples, 16 * 1024 * 1024) };
}

/**
 * Memory still reachable after a forced full GC (V8 heap used + external, Buffers
 * included), from the probe's `gc` samples (memprobe.cjs): what a leak grows, whatever V8's
 * collection schedule. Its noise is the calls in flight, so the floor is 4 MB, not RSS's 16.
 * Without forced GCs (SOAK_GC_MS=0) it is not measured and RSS alone is checked.
 */
export function liveHeapFigures(memory) {
  const samples = memory.filter((m) => m.gc).map((m) => ({ t: m.t, bytes: m.heapUsed + m.external }));
  if (samples.length === 0) return { measured: false, ok: true };
  return { measured: true, ...secondHalf(samples, 4 * 1024 * 1024) };
}

/** A scheduled send's final state (get_notification) in the classes the invariant adds up. */
const FINAL_CLASS = {
  sent: 'sent',
  // The provider took it and then the post was deleted (a Slack retract that came after the release): it was sent.
  retracted: 'sent',
  cancelled: 'cancelled',
  expired: 'expired',
  unknown: 'unknown',
  failed: 'failed',
  // Past NOTIFY_SCHEDULE_GRACE_S (5 s in the soak) before any release could claim it: accounted for only under a store fault.
  expired: 'expired',
  scheduled: 'waiting',
  held: 'waiting',
};
/**
 * Why a release may end `failed` under the soak's faults: the provider refused, stayed
 * unavailable or busy (its concurrency slots full) for the whole send budget, and said so,
 * so nothing was sent (DESIGN section 8: a release goes through a send's rules, and a send
 * can fail). Any other code on a failed release is a break.
 */
export const PROVIDER_FAILURE_CODES = new Set(['PROVIDER_UNAVAILABLE', 'PROVIDER_REJECTED', 'RATE_LIMITED']);
/** Retract answers that decide: a retract that got any other (a store fault, no answer) may or may not have cancelled. */
const DECIDED_RETRACT = new Set(['OK', 'ALREADY_SENT', 'INVALID_FIELD', 'NOT_FOUND']);

const count = (xs) => xs.reduce((o, x) => ((o[x] = (o[x] ?? 0) + 1), o), {});
const examples = (xs) => xs.slice(0, 3).join(', ');
/** p50, p99 and max of sorted ms. */
const spread = (sorted) => ({ p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)), max: Math.round(sorted.at(-1) ?? 0) });

/**
 * For each fault window ({ label, from, to, mustCover? }, epoch ms), how many of `dueById`
 * fell due in it and in which class (`classOf`) they ended; `uncovered(label)` where a
 * window that must see one fell due saw none.
 */
function dueInWindows(windows, dueById, classOf, uncovered) {
  const out = {};
  for (const w of windows) {
    const inside = [...dueById].filter(([, due]) => due >= w.from && due < w.to).map(([id]) => id);
    out[w.label] = { due: inside.length, ...count(inside.map((id) => classOf.get(id))) };
    if (w.mustCover && inside.length === 0) uncovered(w.label);
  }
  return out;
}

/**
 * Scheduled sends and retracts (issue 24): `schedules` are the send_notification answers of
 * calls with send_at, `retracts` the retract_notification answers, `finals` each scheduled
 * id's final get_notification read (Map id -> { code, status, error_code, send_at,
 * first_attempt_at }), `delivered`/`deleted` the fakes' counts by token, `windows` the fault
 * windows ({ label, from, to, mustCover? }, epoch ms; one with mustCover must see a send fall due). Invariant: every scheduled id ends sent,
 * cancelled, expired, unknown, or failed by its provider, and nothing else; each reached a
 * provider at most once, a sent one exactly once, a cancelled/expired/failed one never; a
 * retract answered `cancelled` ends cancelled and was never sent; a retract answered
 * ALREADY_SENT lost to a release that did leave.
 */
export function scheduledFigures({ schedules, retracts, finals, delivered, deleted = new Map(), windows = [] }) {
  const breaks = [];
  const idsByToken = new Map();
  const tokenById = new Map();
  const dueById = new Map();
  for (const r of schedules) {
    if (r.code !== 'OK' || r.structured?.status !== 'scheduled') continue;
    const id = r.structured.id;
    tokenById.set(id, r.token);
    dueById.set(id, Date.parse(r.structured.send_at));
    (idsByToken.get(r.token) ?? idsByToken.set(r.token, new Set()).get(r.token)).add(id);
  }
  const twoIds = [...idsByToken].filter(([, ids]) => ids.size > 1).map(([t]) => t);
  if (twoIds.length) breaks.push(`${twoIds.length} keyed scheduled sends sent twice at once got two ids (e.g. ${examples(twoIds)})`);

  const classOf = new Map();
  const byState = {};
  const failedByCode = {};
  const unaccounted = [];
  for (const id of tokenById.keys()) {
    const f = finals.get(id);
    const state = !f ? 'not read' : f.code === 'OK' ? f.status : f.code === 'NOT_FOUND' ? 'missing' : `unreadable (${f.code})`;
    byState[state] = (byState[state] ?? 0) + 1;
    let cls = FINAL_CLASS[state];
    if (cls === 'failed') {
      const code = f.error_code ?? 'none';
      failedByCode[code] = (failedByCode[code] ?? 0) + 1;
      if (!PROVIDER_FAILURE_CODES.has(code)) cls = undefined;
    }
    if (cls === undefined || cls === 'waiting') unaccounted.push(`${id}: ${state}${f?.error_code ? ` ${f.error_code}` : ''}`);
    classOf.set(id, cls ?? 'other');
  }
  const final = { sent: 0, cancelled: 0, expired: 0, unknown: 0, failed: 0, waiting: 0, other: 0 };
  for (const cls of classOf.values()) final[cls]++;
  const scheduled = tokenById.size;
  const accounted = final.sent + final.cancelled + final.expired + final.unknown + final.failed;
  if (accounted !== scheduled) breaks.push(`scheduled ${scheduled} != sent ${final.sent} + cancelled ${final.cancelled} + expired ${final.expired} + unknown ${final.unknown} + failed by the provider ${final.failed}: ${unaccounted.length} not accounted for (e.g. ${examples(unaccounted)})`);

  // What reached a provider, by the token each scheduled send carried.
  const seen = (id) => delivered.get(tokenById.get(id)) ?? 0;
  const ids = [...tokenById.keys()];
  const dup = ids.filter((id) => seen(id) > 1);
  const lost = ids.filter((id) => classOf.get(id) === 'sent' && seen(id) === 0);
  const notSentButDelivered = ids.filter((id) => ['cancelled', 'expired', 'failed'].includes(classOf.get(id)) && seen(id) > 0);
  if (dup.length) breaks.push(`${dup.length} scheduled sends reached a provider more than once (e.g. ${examples(dup)})`);
  if (lost.length) breaks.push(`${lost.length} scheduled sends read sent never reached a provider (e.g. ${examples(lost)})`);
  if (notSentButDelivered.length) breaks.push(`${notSentButDelivered.length} scheduled sends read cancelled, expired or failed reached a provider (e.g. ${examples(notSentButDelivered.map((id) => `${id}: ${finals.get(id)?.status}`))})`);
  const scheduledTokens = new Set(schedules.map((r) => r.token));
  const neverScheduled = [...scheduledTokens].filter((t) => !idsByToken.has(t) && (delivered.get(t) ?? 0) > 0);
  if (neverScheduled.length) breaks.push(`${neverScheduled.length} sends with send_at reached a provider though no call was answered scheduled (e.g. ${examples(neverScheduled.map((t) => `${t}: ${schedules.filter((r) => r.token === t).map((r) => r.code).join('/')}`))})`);

  // Retracts: which side won, and whether the final state agrees.
  const outcome = (r) => (r.code === 'OK' ? r.structured?.status ?? 'OK' : r.code);
  const retractsById = new Map();
  for (const r of retracts) (retractsById.get(r.id) ?? retractsById.set(r.id, []).get(r.id)).push(r);
  const wonNotCancelled = [];
  const lostButCancelled = [];
  const deletedNotRetracted = [];
  const invalidOdd = [];
  const notFound = retracts.filter((r) => r.code === 'NOT_FOUND').map((r) => r.id);
  let racing = 0;
  for (const r of retracts) {
    const f = finals.get(r.id);
    const o = outcome(r);
    if (Math.abs(r.at - r.due) <= 1_000) racing++;
    if (o === 'cancelled' && (f?.status !== 'cancelled' || seen(r.id) > 0)) wonNotCancelled.push(`${r.id}: ${f?.status ?? f?.code}, delivered ${seen(r.id)}`);
    if (o === 'ALREADY_SENT' && ['cancelled', 'expired'].includes(f?.status)) lostButCancelled.push(`${r.id}: ${f.status}`);
    if (o === 'retracted' && (f?.status !== 'retracted' || !deleted.get(r.token))) deletedNotRetracted.push(`${r.id}: ${f?.status}, deletions ${deleted.get(r.token) ?? 0}`);
    if (o === 'INVALID_FIELD' && !['failed', 'expired'].includes(f?.status)) invalidOdd.push(`${r.id}: ${f?.status}`);
  }
  const cancelledUnasked = ids.filter((id) => {
    if (finals.get(id)?.status !== 'cancelled') return false;
    const rs = retractsById.get(id) ?? [];
    // Cancelled by a retract answered `cancelled`, or by one whose answer was lost to a fault.
    return !rs.some((r) => outcome(r) === 'cancelled' || !DECIDED_RETRACT.has(r.code));
  });
  if (wonNotCancelled.length) breaks.push(`${wonNotCancelled.length} retracts answered cancelled but the send did not end cancelled and unsent (e.g. ${examples(wonNotCancelled)})`);
  if (lostButCancelled.length) breaks.push(`${lostButCancelled.length} retracts answered ALREADY_SENT but the send ended cancelled or expired (e.g. ${examples(lostButCancelled)})`);
  if (deletedNotRetracted.length) breaks.push(`${deletedNotRetracted.length} retracts answered retracted without the post being deleted (e.g. ${examples(deletedNotRetracted)})`);
  if (invalidOdd.length) breaks.push(`${invalidOdd.length} retracts refused INVALID_FIELD on a send that ended neither failed nor expired (e.g. ${examples(invalidOdd)})`);
  if (notFound.length) breaks.push(`${notFound.length} retracts of the caller's own scheduled send answered NOT_FOUND (e.g. ${examples(notFound)})`);
  if (cancelledUnasked.length) breaks.push(`${cancelledUnasked.length} scheduled sends ended cancelled though no retract of them won (e.g. ${examples(cancelledUnasked)})`);

  // How late a release left: due time to its first provider attempt.
  const late = ids
    .map((id) => finals.get(id))
    .filter((f) => f?.first_attempt_at && f.send_at)
    .map((f) => Date.parse(f.first_attempt_at) - Date.parse(f.send_at))
    .sort((a, b) => a - b);

  // Which fault each scheduled send fell due under, and how those ended.
  const dueInFaults = dueInWindows(windows, dueById, classOf, (label) => breaks.push(`no scheduled send fell due during "${label}": the release was not exercised under that fault`));

  return {
    figures: {
      calls: schedules.length,
      answers_by_code: count(schedules.map((r) => (r.code === 'OK' ? `OK:${r.structured?.status}` : r.code))),
      scheduled,
      final,
      final_by_state: byState,
      failed_by_code: failedByCode,
      invariant: `scheduled ${scheduled} = sent ${final.sent} + cancelled ${final.cancelled} + expired ${final.expired} + unknown ${final.unknown} + failed ${final.failed}${accounted === scheduled ? '' : ` (BROKEN: ${scheduled - accounted} unaccounted)`}`,
      retracts: {
        calls: retracts.length,
        within_1s_of_due: racing,
        answers: count(retracts.map(outcome)),
      },
      provider: {
        delivered_distinct: ids.filter((id) => seen(id) > 0).length,
        deleted_after_release: ids.filter((id) => (deleted.get(tokenById.get(id)) ?? 0) > 0).length,
        unknown_delivered: ids.filter((id) => classOf.get(id) === 'unknown' && seen(id) > 0).length,
        duplicates: dup.length,
        lost: lost.length,
        delivered_though_not_sent: notSentButDelivered.length,
      },
      release_late_ms: { releases: late.length, ...spread(late) },
      due_in_fault_windows: dueInFaults,
    },
    breaks,
  };
}

function byKind(records) {
  const out = {};
  for (const r of records) {
    if (r.code === 'OK') continue;
    const k = r.kind === 'send' ? `send:${r.via}` : r.kind;
    out[k] ??= {};
    out[k][r.code] = (out[k][r.code] ?? 0) + 1;
  }
  return out;
}

export function computeFigures({ records: all, fakes, servers, finals = new Map(), windows = [], heldFinals = new Map(), consolePages, escalation }) {
  const breaks = [];
  // The operator's console requests and the answer POSTs are not tool calls: figured apart (heldFigures, escalationFigures).
  const decisions = all.filter((r) => r.kind === 'decision');
  const records = all.filter((r) => r.kind !== 'decision' && r.kind !== 'answer');
  const heldTokens = new Set(records.filter((r) => r.kind === 'held').map((r) => r.token));
  // A call with send_at answered `sent` (its time had passed when the server got to it) is an ordinary send.
  const schedules = records.filter((r) => r.kind === 'schedule');
  const sentAtOnce = new Set(schedules.filter((r) => r.code === 'OK' && r.structured?.status === 'sent').map((r) => r.token));
  const scheduledTokens = new Set(schedules.filter((r) => !sentAtOnce.has(r.token)).map((r) => r.token));
  const codes = {};
  for (const r of records) codes[r.code] = (codes[r.code] ?? 0) + 1;
  const lat = records.map((r) => r.ms).sort((a, b) => a - b);
  const sendLat = records.filter((r) => r.kind === 'send').map((r) => r.ms).sort((a, b) => a - b);
  const broken = records.filter((r) => r.broken);
  if (broken.length) breaks.push(`${broken.length} answers were neither a result nor a coded error (${[...new Set(broken.map((r) => r.code))].join(', ')})`);

  const sends = records.filter((r) => r.kind === 'send' || (r.kind === 'schedule' && sentAtOnce.has(r.token)));
  const okSends = sends.filter((r) => r.code === 'OK');
  const notSent = okSends.filter((r) => r.structured?.status !== 'sent');
  if (notSent.length) breaks.push(`${notSent.length} acknowledged sends were not status "sent" (a live channel fell back to dry-run?)`);
  const acked = new Set(okSends.map((r) => r.token));
  const unknown = new Set(sends.filter((r) => r.code === 'DELIVERY_UNKNOWN').map((r) => r.token));

  // The scheduled sends' deliveries are checked apart (scheduledFigures); these are the sends answered at once.
  const delivered = new Map();
  const scheduledDelivered = new Map();
  const deleted = new Map();
  let providerDeliveries = 0;
  let untokened = 0;
  let deletedUnknown = 0;
  let updatedUnknown = 0;
  /** token -> version marker of each delivery; token -> version of each Slack chat.update. */
  const versions = new Map();
  const updates = new Map();
  const providers = {};
  /** First send id -> channel -> deliveries of its step there. */
  const steps = new Map();
  for (const f of fakes) {
    for (const [root, n] of f.steps ?? []) (steps.get(root) ?? steps.set(root, new Map()).get(root)).set(f.channel, n);
    untokened += f.untokened;
    deletedUnknown += f.retractedUnknown ?? 0;
    updatedUnknown += f.updatedUnknown ?? 0;
    let n = 0;
    for (const [token, vs] of f.versions ?? []) (versions.get(token) ?? versions.set(token, []).get(token)).push(...vs);
    for (const [token, vs] of f.updated ?? []) (updates.get(token) ?? updates.set(token, []).get(token)).push(...vs);
    for (const [token, count] of f.delivered) {
      if (heldTokens.has(token)) {
        n += count;
        continue;
      }
      const scheduledOne = scheduledTokens.has(token);
      const into = scheduledOne ? scheduledDelivered : delivered;
      into.set(token, (into.get(token) ?? 0) + count);
      n += count;
      if (!scheduledOne) providerDeliveries += count;
    }
    for (const [token, count] of f.retracted ?? []) deleted.set(token, (deleted.get(token) ?? 0) + count);
    providers[f.name] = { requests: f.requests, delivered: n, distinct: f.delivered.size, escalation_steps: [...(f.steps ?? new Map()).values()].reduce((a, b) => a + b, 0), ...(f.retracted ? { deleted: f.retracted.size } : {}), faults_served: f.faults };
  }
  if (deletedUnknown) breaks.push(`${deletedUnknown} deletions named a message the Slack fake never posted`);
  if (updatedUnknown) breaks.push(`${updatedUnknown} chat.update calls named a message the Slack fake never posted`);
  const held = heldFigures({ helds: records.filter((r) => r.kind === 'held'), edits: records.filter((r) => r.kind === 'edit' && r.target === 'held'), decisions, finals: heldFinals, versions, updates });
  breaks.push(...held.breaks);
  const scheduledEdits = scheduledEditFigures({ edits: records.filter((r) => r.kind === 'edit' && r.target === 'scheduled'), schedules, versions, updates });
  breaks.push(...scheduledEdits.breaks);
  const updatedOrdinary = [...updates.keys()].filter((t) => !scheduledTokens.has(t) && !heldTokens.has(t));
  if (updatedOrdinary.length) breaks.push(`${updatedOrdinary.length} Slack posts never edited were updated at the provider (e.g. ${examples(updatedOrdinary)})`);
  const escalations = escalation && escalationFigures({ sends: records.filter((r) => r.kind === 'send' && r.escalate), answers: all.filter((r) => r.kind === 'answer'), steps, windows, ...escalation });
  if (escalations) breaks.push(...escalations.breaks);
  const scheduled = scheduledFigures({ schedules: schedules.filter((r) => scheduledTokens.has(r.token)), retracts: records.filter((r) => r.kind === 'retract'), finals, delivered: scheduledDelivered, deleted, windows });
  breaks.push(...scheduled.breaks);
  const duplicates = [...delivered].filter(([, c]) => c > 1).map(([t]) => t);
  const lost = [...acked].filter((t) => !delivered.has(t));
  const deliveredUnacked = [...delivered.keys()].filter((t) => !acked.has(t));
  const unackedUnknown = deliveredUnacked.filter((t) => unknown.has(t));
  const unackedOther = deliveredUnacked.filter((t) => !unknown.has(t));
  if (duplicates.length) breaks.push(`${duplicates.length} sends reached a provider more than once (e.g. ${duplicates.slice(0, 3).join(', ')})`);
  if (lost.length) breaks.push(`${lost.length} acknowledged sends never reached a provider (e.g. ${lost.slice(0, 3).join(', ')})`);
  if (unackedOther.length) {
    const why = unackedOther.slice(0, 3).map((t) => `${t}: ${sends.filter((r) => r.token === t).map((r) => r.code).join('/')}`);
    breaks.push(`${unackedOther.length} sends reached a provider but were answered with an error other than DELIVERY_UNKNOWN (${why.join('; ')})`);
  }
  if (untokened) breaks.push(`${untokened} provider deliveries carried no soak token`);

  const rss = {};
  const live = {};
  for (const s of servers) {
    rss[s.name] = rssFigures(s.rss);
    if (!rss[s.name].ok) breaks.push(`${s.name}: RSS grew ${rss[s.name].growth_mb} MB over the second half (tolerance ${rss[s.name].tolerance_mb} MB) or too few samples`);
    live[s.name] = liveHeapFigures(s.memory ?? []);
    if (!live[s.name].ok) breaks.push(`${s.name}: memory reachable after a full GC grew ${live[s.name].growth_mb} MB over the second half (tolerance ${live[s.name].tolerance_mb} MB) or too few samples`);
    if (s.exitedEarly) breaks.push(`${s.name} exited during the run (${JSON.stringify(s.exitedEarly)}); last stderr: ${s.tail.slice(-12).join(' | ').slice(0, 3000)}`);
  }

  return {
    calls: records.length,
    calls_by_kind: Object.fromEntries(['send', 'schedule', 'retract', 'held', 'edit', 'show_banner', 'list_banners', 'dismiss_banner'].map((k) => [k, records.filter((r) => r.kind === k).length])),
    answers_by_code: Object.fromEntries(Object.entries(codes).sort((a, b) => b[1] - a[1])),
    errors_by_kind: byKind(records),
    latency_ms: { p50: Math.round(percentile(lat, 50)), p99: Math.round(percentile(lat, 99)), send_p50: Math.round(percentile(sendLat, 50)), send_p99: Math.round(percentile(sendLat, 99)) },
    sends: {
      answers: sends.length,
      acknowledged_answers: okSends.length,
      replayed_answers: okSends.filter((r) => r.structured?.replayed).length,
      acknowledged_distinct: acked.size,
      sent_at_once_with_send_at: sentAtOnce.size,
      provider_deliveries: providerDeliveries,
      provider_distinct: delivered.size,
      duplicates: duplicates.length,
      lost: lost.length,
      delivered_with_delivery_unknown: unackedUnknown.length,
      delivered_unacknowledged_other: unackedOther.length,
      delivery_unknown_answers: sends.filter((r) => r.code === 'DELIVERY_UNKNOWN').length,
    },
    scheduled: scheduled.figures,
    scheduled_edits: scheduledEdits.figures,
    held: { ...held.figures, console_pages: consolePages },
    escalations: escalations?.figures,
    providers,
    rss,
    live_heap: live,
    breaks,
  };
}

/** Edit answers that say nothing of whether the edit landed (a store fault, no answer). */
const DECIDED_EDIT = new Set(['OK', 'ALREADY_SENT', 'INVALID_FIELD', 'NOT_FOUND', 'APPROVAL_REQUIRED', 'RECIPIENT_NOT_ALLOWED']);
/** A held send's final state in the classes the invariant names. */
const HELD_CLASS = { sent: 'sent', dry_run: 'sent', declined: 'declined', expired: 'expired', failed: 'failed', unknown: 'unknown', pending_approval: 'pending_approval' };

/**
 * Held sends (issue 35): `helds` are the send_notification answers of sends the rules hold,
 * `edits` the edit_notification answers on them, `decisions` the operator's console
 * decisions (operator.mjs: the version and hash each was made on, and how the console
 * answered), `finals` each held id's final get_notification read, `versions` the fakes'
 * deliveries by token (the version marker each carried), `updates` Slack chat.update calls
 * by token. Invariants: whatever reached a provider for a held send carries a version some
 * accepted approval was made on (never an edit no decision approved); at most once; never
 * after an accepted decline, nor older than an edit answered `pending_approval`, nor newer
 * than... (an edit answered ALREADY_SENT did not leave); an approved post is never edited
 * at Slack; each held id ends sent, declined, expired, failed (with a code), unknown, or
 * pending_approval (undecided, or edited after its last approval), and a sent one reached
 * a provider exactly once; a declined one never.
 */
export function heldFigures({ helds, edits, decisions, finals, versions, updates = new Map() }) {
  const breaks = [];
  const tokenById = new Map();
  for (const r of helds) if (r.code === 'OK' && r.structured?.status === 'pending_approval') tokenById.set(r.structured.id, r.token);
  const notHeld = helds.filter((r) => r.code === 'OK' && r.structured?.status !== 'pending_approval');
  if (notHeld.length) breaks.push(`${notHeld.length} sends the approval rules hold were answered other than pending_approval (e.g. ${examples(notHeld.map((r) => `${r.token}: ${r.structured?.status}`))})`);
  const heldTokens = new Set(tokenById.values());
  const neverHeld = [...new Set(helds.map((r) => r.token))].filter((t) => !heldTokens.has(t) && (versions.get(t) ?? []).length > 0);
  if (neverHeld.length) breaks.push(`${neverHeld.length} sends the rules hold reached a provider though the call was not answered pending_approval (e.g. ${examples(neverHeld)})`);

  const editsById = new Map();
  for (const e of edits) (editsById.get(e.id) ?? editsById.set(e.id, []).get(e.id)).push(e);
  const decisionsById = new Map();
  for (const d of decisions) (decisionsById.get(d.id) ?? decisionsById.set(d.id, []).get(d.id)).push(d);

  const problems = { declined_undecided: [], unapproved_text: [], duplicates: [], declined_delivered: [], declined_not_declined: [], older_than_edit: [], edit_already_sent_left: [], approved_post_edited: [], lost: [], delivered_not_sent: [], pending_unexplained: [], other_state: [] };
  const final = { sent: 0, declined: 0, expired: 0, failed: 0, unknown: 0, pending_approval: 0, other: 0 };
  const pendingWhy = { undecided: 0, edited_after_approval: 0 };
  const expiredWhy = { undecided: 0, edited_after_approval: 0, approved_release_late: 0 };
  const failedByCode = {};
  const leftVersion = { original: 0, edited: 0 };
  let approvedTwice = 0;
  for (const [id, token] of tokenById) {
    const ds = (decisionsById.get(id) ?? []).filter((d) => d.outcome === 'accepted');
    // A decision whose answer a fault took (no answer, a store fault) may have stood: its version counts as approved.
    const maybe = (decisionsById.get(id) ?? []).filter((d) => d.outcome === 'retry' && d.postAt);
    const approvedVersions = new Set([...ds, ...maybe].filter((d) => d.decision === 'approve').map((d) => d.version));
    const maxApproved = Math.max(-1, ...approvedVersions);
    if (ds.filter((d) => d.decision === 'approve').length > 1) approvedTwice++;
    const declined = ds.some((d) => d.decision === 'decline');
    const es = editsById.get(id) ?? [];
    const okPending = es.filter((e) => e.code === 'OK' && e.structured?.status === 'pending_approval').map((e) => e.version);
    const maxOkEdit = Math.max(0, ...okPending);
    const dv = versions.get(token) ?? [];
    const f = finals.get(id);
    const state = !f ? 'not read' : f.code === 'OK' ? f.status : f.code === 'NOT_FOUND' ? 'missing' : `unreadable (${f.code})`;
    const cls = HELD_CLASS[state];
    const tag = `${id} (${token})`;
    if (dv.length > 1) problems.duplicates.push(`${tag}: ${dv.length} deliveries`);
    for (const v of dv) if (!approvedVersions.has(v)) problems.unapproved_text.push(`${tag}: version ${v} left; approved: ${[...approvedVersions].join('/') || 'none'}`);
    for (const v of dv) (v > 0 ? leftVersion.edited++ : leftVersion.original++);
    if (declined && dv.length) problems.declined_delivered.push(tag);
    if (declined && state !== 'declined') problems.declined_not_declined.push(`${tag}: ${state}`);
    if (state === 'declined' && !declined && !maybe.some((d) => d.decision === 'decline')) problems.declined_undecided.push(tag);
    if (dv.some((v) => v < maxOkEdit)) problems.older_than_edit.push(`${tag}: version ${dv.join('/')} left after edit ${maxOkEdit} answered pending_approval`);
    // ALREADY_SENT lost to a release under way; a release that then sent nothing (deferred by a
    // fault) leaves the approved send waiting, and a later edit answered pending_approval may
    // reopen it: only the versions such an edit made may leave after it.
    for (const e of es.filter((e) => e.code === 'ALREADY_SENT')) {
      const reopened = es.filter((x) => x.code === 'OK' && x.structured?.status === 'pending_approval' && x.start > (e.end ?? e.start)).map((x) => x.version);
      if (dv.some((v) => v >= e.version && !reopened.includes(v))) problems.edit_already_sent_left.push(`${tag}: edit ${e.version} answered ALREADY_SENT, version ${dv.join('/')} left`);
    }
    if ((updates.get(token) ?? []).length) problems.approved_post_edited.push(`${tag}: ${updates.get(token).length} chat.update`);
    if (cls === undefined) {
      problems.other_state.push(`${tag}: ${state}`);
      final.other++;
      continue;
    }
    final[cls]++;
    if (cls === 'sent' && dv.length !== 1) problems.lost.push(`${tag}: read ${state}, ${dv.length} deliveries`);
    if (['declined', 'expired', 'failed', 'pending_approval'].includes(cls) && dv.length) problems.delivered_not_sent.push(`${tag}: read ${state}, delivered version ${dv.join('/')}`);
    if (cls === 'failed') {
      const code = f.error_code ?? 'none';
      failedByCode[code] = (failedByCode[code] ?? 0) + 1;
      if (code === 'none') problems.other_state.push(`${tag}: failed without an error code`);
    }
    // Edits answered pending_approval, or whose answer a fault took, after the last approval.
    const maybeEdited = es.filter((e) => (e.code === 'OK' && e.structured?.status === 'pending_approval') || !DECIDED_EDIT.has(e.code)).map((e) => e.version);
    if (cls === 'expired') {
      if (ds.length === 0) expiredWhy.undecided++;
      else if (maybeEdited.some((v) => v > maxApproved)) expiredWhy.edited_after_approval++;
      else expiredWhy.approved_release_late++;
    }
    if (cls === 'pending_approval') {
      // Legitimate when no decision stood, or an edit came after the last approval.
      if (ds.length === 0) pendingWhy.undecided++;
      else if (!declined && maybeEdited.some((v) => v > maxApproved)) pendingWhy.edited_after_approval++;
      else problems.pending_unexplained.push(`${tag}: approved version ${maxApproved}, edits ${es.map((e) => `${e.version}:${e.code}`).join(',')}`);
    }
  }
  const say = {
    unapproved_text: 'held sends reached a provider with a text no accepted decision approved',
    duplicates: 'held sends reached a provider more than once',
    declined_delivered: 'declined held sends reached a provider',
    declined_not_declined: 'held sends whose decline was accepted did not end declined',
    declined_undecided: 'held sends ended declined though no decline was made',
    older_than_edit: 'held sends left with a text older than an edit answered pending_approval',
    edit_already_sent_left: 'held sends left with the text of an edit answered ALREADY_SENT',
    approved_post_edited: 'approved Slack posts were edited at the provider',
    lost: 'held sends read sent did not reach a provider exactly once',
    delivered_not_sent: 'held sends read declined, expired, failed or pending_approval reached a provider',
    pending_unexplained: 'held sends ended pending_approval though their last text was approved or declined',
    other_state: 'held sends ended in no state the invariant allows',
  };
  for (const [k, xs] of Object.entries(problems)) if (xs.length) breaks.push(`${xs.length} ${say[k]} (e.g. ${examples(xs)})`);
  const serverErrors = decisions.filter((d) => d.outcome === 'server_error');
  if (serverErrors.length) breaks.push(`${serverErrors.length} console requests answered 5xx (e.g. ${examples(serverErrors.map((d) => `${d.id}: ${d.said}`))})`);

  const accepted = decisions.filter((d) => d.outcome === 'accepted');
  const heldEdits = edits;
  const racing = heldEdits.filter((e) => (decisionsById.get(e.id) ?? []).some((d) => d.postAt && Math.abs(e.start - d.postAt) <= 500)).length;
  return {
    figures: {
      calls: helds.length,
      answers_by_code: count(helds.map((r) => (r.code === 'OK' ? `OK:${r.structured?.status}` : r.code))),
      held: tokenById.size,
      final,
      invariant: `held ${tokenById.size} = sent ${final.sent} + declined ${final.declined} + expired ${final.expired} + failed ${final.failed} + unknown ${final.unknown} + pending_approval ${final.pending_approval} (undecided ${pendingWhy.undecided}, edited after approval ${pendingWhy.edited_after_approval})${final.other ? ` + OTHER ${final.other}` : ''}`,
      pending_approval_why: pendingWhy,
      /** undecided: no decision stood before the TTL (left by the operator, or its decision came too late). */
      expired_why: expiredWhy,
      failed_by_code: failedByCode,
      decisions: {
        posts: decisions.filter((d) => d.postAt).length,
        by_outcome: count(decisions.map((d) => `${d.decision}:${d.outcome}`)),
        accepted_approve: accepted.filter((d) => d.decision === 'approve').length,
        accepted_decline: accepted.filter((d) => d.decision === 'decline').length,
        accepted_on_edited_text: accepted.filter((d) => d.version > 0).length,
        held_ids_approved_twice: approvedTwice,
        said: count(accepted.map((d) => d.said.replace(/ntf_\S+/, 'ntf_…'))),
        not_accepted_said: count(decisions.filter((d) => d.said && d.outcome !== 'accepted').map((d) => `${d.outcome}: ${d.said.replace(/ntf_[0-9a-f]+/g, 'ntf_…').replace(/sha256 [0-9a-f]+/g, 'sha256 …').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T').slice(0, 160)}`)),
      },
      edits: { calls: heldEdits.length, answers: count(heldEdits.map((e) => (e.code === 'OK' ? `OK:${e.structured?.status}` : e.code))), within_500ms_of_a_decision: racing },
      provider: {
        delivered_distinct: [...tokenById.values()].filter((t) => (versions.get(t) ?? []).length > 0).length,
        left_with_original_text: leftVersion.original,
        left_with_edited_text: leftVersion.edited,
        duplicates: problems.duplicates.length,
        unapproved_text: problems.unapproved_text.length,
        declined_delivered: problems.declined_delivered.length,
      },
    },
    breaks,
  };
}

/**
 * Edits of scheduled sends (issue 35): an edit answered `scheduled`/`held` changed what
 * leaves (the version that reached a provider is that edit's or a later one); one answered
 * ALREADY_SENT lost to the release (its text never left); one answered `sent` edited a Slack
 * post that had left (the fake saw chat.update with that text).
 */
export function scheduledEditFigures({ edits, schedules, versions, updates = new Map() }) {
  const breaks = [];
  const viaByToken = new Map(schedules.map((r) => [r.token, r.via]));
  const olderLeft = [];
  const alreadySentLeft = [];
  const updateMissing = [];
  const notSlackSent = [];
  const left = { original: 0, edited: 0 };
  const tokens = new Set();
  for (const e of edits) {
    const dv = versions.get(e.token) ?? [];
    tokens.add(e.token);
    if (e.code === 'OK' && ['scheduled', 'held'].includes(e.structured?.status) && dv.some((v) => v < e.version)) olderLeft.push(`${e.id}: edit ${e.version} answered ${e.structured.status}, version ${dv.join('/')} left`);
    if (e.code === 'ALREADY_SENT' && dv.some((v) => v >= e.version)) alreadySentLeft.push(`${e.id}: edit ${e.version} ALREADY_SENT, version ${dv.join('/')} left`);
    if (e.code === 'OK' && e.structured?.status === 'sent') {
      if (viaByToken.get(e.token) !== 'slack') notSlackSent.push(`${e.id}: ${viaByToken.get(e.token)}`);
      else if (!(updates.get(e.token) ?? []).includes(e.version)) updateMissing.push(`${e.id}: edit ${e.version}`);
    }
  }
  for (const t of tokens) for (const v of versions.get(t) ?? []) (v > 0 ? left.edited++ : left.original++);
  if (olderLeft.length) breaks.push(`${olderLeft.length} scheduled sends left with a text older than an edit answered scheduled/held (e.g. ${examples(olderLeft)})`);
  if (alreadySentLeft.length) breaks.push(`${alreadySentLeft.length} scheduled sends left with the text of an edit answered ALREADY_SENT (e.g. ${examples(alreadySentLeft)})`);
  if (updateMissing.length) breaks.push(`${updateMissing.length} edits answered sent without the Slack post being updated (e.g. ${examples(updateMissing)})`);
  if (notSlackSent.length) breaks.push(`${notSlackSent.length} edits of an email or SMS that had left answered sent (e.g. ${examples(notSlackSent)})`);
  return {
    figures: {
      calls: edits.length,
      answers: count(edits.map((e) => (e.code === 'OK' ? `OK:${e.structured?.status}` : e.code))),
      edited_sends: tokens.size,
      left_with_original_text: left.original,
      left_with_edited_text: left.edited,
      slack_posts_updated_after_release: [...tokens].filter((t) => (updates.get(t) ?? []).length > 0).length,
    },
    breaks,
  };
}

/** An escalation step's state (get_notification's `escalation`) in the classes the invariant adds up. */
const STEP_CLASS = {
  sent: 'sent',
  // An SMS step: Twilio took it (queued), and a receipt may have moved it on.
  queued: 'sent',
  delivered: 'sent',
  cancelled: 'cancelled',
  unknown: 'unknown',
  failed: 'failed',
  // Past NOTIFY_SCHEDULE_GRACE_S (5 s in the soak) before any release could claim it: accounted for only under a store fault.
  expired: 'expired',
  scheduled: 'waiting',
  held: 'waiting',
  releasing: 'waiting',
};
/**
 * How long before a step's due time an answer acknowledged to its POST must have been to
 * cancel it for sure. The answer commits before its 2xx, and no claim takes a step before
 * its process's Date.now() reaches due_at (the stores' claimDue: `due_at <= now`), which is
 * the same host clock the soak reads in whole ms: so the order needs none. The margin only
 * absorbs the ms truncation of both reads and a clock adjustment between them.
 */
export const ANSWER_MARGIN_MS = 5;
/** Within this of a step's due time, an answer is said to race its release. */
const RACE_MS = 750;
const isSent = (r) => r.code === 'OK' && r.structured?.status === 'sent';

/**
 * The first send an escalating call (`escalate`) started, whose steps go on: answered `sent`,
 * or DELIVERY_UNKNOWN (it may have left, and nobody has answered); undefined for any other answer.
 */
export function escalatedId(r) {
  if (r.kind !== 'send' || !r.escalate) return undefined;
  if (isSent(r)) return r.structured.id;
  return r.code === 'DELIVERY_UNKNOWN' ? r.structured?.error?.notification_id : undefined;
}

/**
 * Escalations (issue 39): `sends` are the send_notification answers of sends naming a policy
 * (`escalate`), `policies` each policy's step channels in order, `answers` the answer POSTs
 * (load.mjs: choice, start/end, outcome `recorded`/`answered`/other, the choice the page
 * showed), `finals` each acknowledged first send's final get_notification read (its `answer`
 * and `escalation` steps), `steps` the fakes' step deliveries (first send id -> channel ->
 * count), `audit` the store's audit entries (`question.answered` and `outbox.*`, seq order),
 * or undefined when they could not be read. Invariant: steps = sent + cancelled + unknown +
 * failed (by the provider); a sent step reached its channel exactly once, a cancelled or
 * failed one never, any at most once; a step due more than ANSWER_MARGIN_MS after an answer
 * was acknowledged ended cancelled and undelivered; a step cancelled only under an answer; the
 * answer kept is the first (the one POST answered `recorded`, the choice every later POST was
 * shown); no step was first claimed after its first send's answer in the audit chain.
 */
export function escalationFigures({ sends, policies, answers, finals, steps, audit, windows = [], graceMs = 5_000 }) {
  const breaks = [];
  const roots = new Map();
  for (const r of sends) {
    const id = escalatedId(r);
    if (id) roots.set(id, { token: r.token, policy: r.escalate });
  }
  const problems = { missing_steps: [], unaccounted: [], duplicates: [], lost: [], delivered_not_sent: [], orphans: [], after_answer: [], cancelled_unanswered: [], first_answer: [], claimed_after_answer: [], posts_failed: [] };
  const final = { sent: 0, cancelled: 0, unknown: 0, failed: 0, expired: 0, waiting: 0, other: 0 };
  const byState = {};
  const failedByCode = {};
  const answerVia = {};
  const racingSteps = {};
  const dueById = new Map();
  const classById = new Map();
  const deliveredById = new Map();
  const stepsOfRoot = new Map();
  let stepCount = 0;
  let answered = 0;
  let dueAfterAnswer = 0;

  const postsByRoot = new Map();
  for (const a of answers) (postsByRoot.get(a.root) ?? postsByRoot.set(a.root, []).get(a.root)).push(a);
  const stood = (a) => a.outcome === 'recorded' || a.outcome === 'answered';
  // An answer whose POST got no clear answer (no answer, a store fault) may have been taken.
  const undecided = (a) => !stood(a) && a.outcome !== 'no_link' && !/^HTTP_4/.test(a.outcome);
  for (const a of answers) if (a.outcome.startsWith('NO_ANSWER') || (/^HTTP_5/.test(a.outcome) && a.outcome !== 'HTTP_503')) problems.posts_failed.push(`${a.root}: ${a.outcome}`);

  for (const [id, root] of roots) {
    const f = finals.get(id);
    const shown = f?.code === 'OK' ? (f.escalation ?? []) : [];
    const want = policies[root.policy]?.length ?? 0;
    if (f?.code !== 'OK' || shown.length !== want) problems.missing_steps.push(`${id} (${root.token}, ${root.policy}): ${f?.code === 'OK' ? `${shown.length} of ${want} steps` : `read ${f?.code ?? 'never'}`}`);
    const delivered = steps.get(id) ?? new Map();
    const answer = f?.answer;
    if (answer) {
      answered++;
      answerVia[answer.via] = (answerVia[answer.via] ?? 0) + 1;
    }
    const posts = postsByRoot.get(id) ?? [];
    // The first moment an answer is known to have stood: a POST that recorded it, or was shown it.
    const ackAt = Math.min(...posts.filter(stood).map((a) => a.end));
    stepsOfRoot.set(id, shown.map((s) => s.id));
    for (const s of shown) {
      stepCount++;
      const state = s.state ?? 'none';
      byState[state] = (byState[state] ?? 0) + 1;
      let cls = STEP_CLASS[state] ?? 'other';
      if (cls === 'failed') {
        const code = s.code ?? 'none';
        failedByCode[code] = (failedByCode[code] ?? 0) + 1;
        if (!PROVIDER_FAILURE_CODES.has(code)) cls = 'other';
      }
      final[cls]++;
      classById.set(s.id, cls);
      const due = Date.parse(s.due_at);
      dueById.set(s.id, due);
      // A step may expire only when a store fault kept every release from claiming it through its whole grace.
      if (cls === 'expired' && !windows.some((w) => /store/i.test(w.label) && w.from <= due + graceMs && w.to >= due - graceMs)) {
        final.expired--;
        final.other++;
        cls = 'other';
      }
      const n = delivered.get(s.via) ?? 0;
      deliveredById.set(s.id, n);
      const tag = `${s.id} (${s.via} step of ${id})`;
      if (cls === 'waiting' || cls === 'other') problems.unaccounted.push(`${tag}: ${state}${s.code ? ` ${s.code}` : ''}`);
      if (n > 1) problems.duplicates.push(`${tag}: ${n} deliveries`);
      if (cls === 'sent' && n !== 1) problems.lost.push(`${tag}: read ${state}, ${n} deliveries`);
      if ((cls === 'cancelled' || cls === 'failed') && n > 0) problems.delivered_not_sent.push(`${tag}: read ${state}, ${n} deliveries`);
      if (cls === 'cancelled' && !answer) problems.cancelled_unanswered.push(`${tag}: its first send has no answer`);
      if (due > ackAt + ANSWER_MARGIN_MS) {
        dueAfterAnswer++;
        if (cls !== 'cancelled' || n > 0) problems.after_answer.push(`${tag}: due ${due - ackAt} ms after an answer was acknowledged, read ${state}, ${n} deliveries`);
      }
      if (Number.isFinite(ackAt) && Math.abs(due - ackAt) <= RACE_MS) racingSteps[cls] = (racingSteps[cls] ?? 0) + 1;
    }
    for (const via of delivered.keys()) if (!shown.some((s) => s.via === via)) problems.orphans.push(`${id}: a ${via} step delivered that get_notification does not list`);

    // The first answer stands: one POST recorded it, and every later one was shown its choice.
    const recorded = posts.filter((a) => a.outcome === 'recorded');
    const tag = `${id} (${root.token})`;
    if (recorded.length > 1) problems.first_answer.push(`${tag}: ${recorded.length} answers recorded (${recorded.map((a) => a.choice).join(', ')})`);
    const kept = answer?.choice;
    if (recorded.length && kept !== recorded[0].choice) problems.first_answer.push(`${tag}: recorded ${recorded[0].choice}, reads ${kept ?? 'no answer'}`);
    for (const a of posts.filter((p) => p.outcome === 'answered')) if (a.shown !== kept) problems.first_answer.push(`${tag}: a later answer was shown ${a.shown}, reads ${kept ?? 'no answer'}`);
    if (answer && !recorded.length && !posts.some((a) => undecided(a) && a.choice === kept)) problems.first_answer.push(`${tag}: reads ${kept}, which no answer sent could have recorded`);
    if (answer && answer.by !== 'link') problems.first_answer.push(`${tag}: answered by ${answer.by}, not by a link`);
  }
  // Step deliveries by first sends the load never saw acknowledged as escalations.
  for (const [id, byVia] of steps) if (!roots.has(id)) problems.orphans.push(`${id}: ${[...byVia.keys()].join('/')} step delivered for a first send not acknowledged`);

  // The audit chain orders commits: a step's first claim after its first send's answer left after the answer.
  const claimLate = [];
  /** Step id -> how long after its due time it was written (its first send was still going), and expired at a claim. */
  const keptLate = new Map();
  const expiredLate = new Map();
  const auditFigures = { read: audit !== undefined, entries: audit?.length ?? 0 };
  if (audit === undefined) breaks.push('the audit chain could not be read: whether a step was claimed after an answer was not checked');
  else {
    const answerSeq = new Map();
    const firstClaim = new Map();
    const answersOf = {};
    for (const e of audit) {
      if (e.kind === 'question.answered') {
        answersOf[e.notification_id] = (answersOf[e.notification_id] ?? 0) + 1;
        if (!answerSeq.has(e.notification_id)) answerSeq.set(e.notification_id, e.seq);
      } else if (e.kind === 'outbox.releasing' && !firstClaim.has(e.notification_id)) firstClaim.set(e.notification_id, e);
      else if (e.kind === 'outbox.scheduled' && dueById.has(e.notification_id) && !keptLate.has(e.notification_id)) keptLate.set(e.notification_id, Date.parse(e.at) - dueById.get(e.notification_id));
      else if (e.kind === 'outbox.expired' && dueById.has(e.notification_id)) expiredLate.set(e.notification_id, Date.parse(e.at) - dueById.get(e.notification_id));
    }
    // Why a step ended waiting or expired: written after its due time, or first claimed past the grace.
    problems.unaccounted = problems.unaccounted.map((p) => {
      const id = p.split(' ')[0];
      const written = keptLate.get(id) > 0 ? `, written ${keptLate.get(id)} ms after its due time` : '';
      return `${p}${written}${expiredLate.has(id) ? `, expired at a claim ${expiredLate.get(id)} ms after it` : ''}`;
    });
    for (const [id, n] of Object.entries(answersOf)) if (n > 1 && roots.has(id)) problems.first_answer.push(`${id}: ${n} answers in the audit chain`);
    for (const [id, stepIds] of stepsOfRoot) {
      const seq = answerSeq.get(id);
      for (const sid of stepIds) {
        const claim = firstClaim.get(sid);
        if (claim && dueById.has(sid)) claimLate.push(Date.parse(claim.at) - dueById.get(sid));
        if (seq !== undefined && claim && claim.seq > seq) problems.claimed_after_answer.push(`${sid} (step of ${id}): claimed at audit seq ${claim.seq}, answered at ${seq}`);
      }
    }
  }
  claimLate.sort((a, b) => a - b);

  const say = {
    missing_steps: 'escalated sends acknowledged sent (or DELIVERY_UNKNOWN) do not list their policy\'s steps',
    unaccounted: 'steps ended neither sent, cancelled, unknown nor failed by their provider',
    duplicates: 'steps reached their provider more than once',
    lost: 'steps read sent did not reach their provider exactly once',
    delivered_not_sent: 'steps read cancelled or failed reached their provider',
    orphans: 'step deliveries belong to no step listed',
    after_answer: `steps due more than ${ANSWER_MARGIN_MS} ms after an answer was acknowledged were not cancelled, or left`,
    cancelled_unanswered: 'steps were cancelled though their first send was never answered',
    first_answer: 'escalations did not keep their first answer',
    claimed_after_answer: 'steps were claimed after their first send\'s answer (audit chain order)',
    posts_failed: 'answer POSTs got no answer or a 5xx other than 503',
  };
  for (const [k, xs] of Object.entries(problems)) if (xs.length) breaks.push(`${xs.length} ${say[k]} (e.g. ${examples(xs)})`);
  const accounted = final.sent + final.cancelled + final.unknown + final.failed + final.expired;
  if (accounted !== stepCount) breaks.push(`steps ${stepCount} != sent ${final.sent} + cancelled ${final.cancelled} + unknown ${final.unknown} + failed by the provider ${final.failed} + expired under a store fault ${final.expired}: ${stepCount - accounted} not accounted for`);

  const dueInFaults = dueInWindows(windows, dueById, classById, (label) => breaks.push(`no escalation step fell due during "${label}": steps were not released under that fault`));
  const timing = (a) => {
    const d = a.dues ?? [];
    if (!d.length || a.start === undefined) return 'not sent';
    if (d.some((due) => Math.abs(a.start - due) <= RACE_MS)) return `within ${RACE_MS} ms of a due time`;
    if (a.start < d[0]) return 'before the first due time';
    return a.start > d.at(-1) ? 'after the last due time' : 'between due times';
  };
  return {
    figures: {
      calls: sends.length,
      answers_by_code: count(sends.map((r) => (r.code === 'OK' ? `OK:${r.structured?.status}` : r.code))),
      escalated: roots.size,
      by_policy: count([...roots.values()].map((r) => r.policy)),
      steps: stepCount,
      final,
      final_by_state: byState,
      failed_by_code: failedByCode,
      invariant: `steps ${stepCount} = sent ${final.sent} + cancelled ${final.cancelled} + unknown ${final.unknown} + failed ${final.failed}${final.expired ? ` (+ expired under a store fault ${final.expired})` : ''}${accounted === stepCount ? '' : ` (BROKEN: ${stepCount - accounted} unaccounted)`}`,
      answered,
      unanswered: roots.size - answered,
      answered_via: answerVia,
      answers: {
        posts: answers.length,
        outcomes: count(answers.map((a) => a.outcome)),
        link_from: count(answers.filter((a) => a.link_from).map((a) => a.link_from)),
        timing: count(answers.map(timing)),
        racing_pairs: [...postsByRoot.values()].filter((ps) => ps.length > 1 && ps[0].start !== undefined && Math.abs(ps[0].start - (ps[1].start ?? Infinity)) <= 50).length,
      },
      steps_due_after_an_answer: dueAfterAnswer,
      steps_due_within_750ms_of_an_answer: racingSteps,
      provider: {
        step_deliveries: [...steps.values()].reduce((n, m) => n + [...m.values()].reduce((a, b) => a + b, 0), 0),
        duplicates: problems.duplicates.length,
        lost: problems.lost.length,
        delivered_though_not_sent: problems.delivered_not_sent.length,
        unknown_delivered: [...classById].filter(([sid, c]) => c === 'unknown' && deliveredById.get(sid) > 0).length,
      },
      audit: { ...auditFigures, claimed_after_answer: problems.claimed_after_answer.length },
      kept_after_due: { steps: [...keptLate.values()].filter((ms) => ms > 0).length, max_ms: Math.max(0, ...keptLate.values()) },
      claim_late_ms: { claims: claimLate.length, ...spread(claimLate) },
      due_in_fault_windows: dueInFaults,
    },
    breaks,
  };
}
