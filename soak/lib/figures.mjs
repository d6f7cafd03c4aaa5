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
  const dueInFaults = {};
  for (const w of windows) {
    const inside = ids.filter((id) => dueById.get(id) >= w.from && dueById.get(id) < w.to);
    dueInFaults[w.label] = { due: inside.length, ...count(inside.map((id) => classOf.get(id))) };
    if (w.mustCover && inside.length === 0) breaks.push(`no scheduled send fell due during "${w.label}": the release was not exercised under that fault`);
  }

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
      release_late_ms: { releases: late.length, p50: Math.round(percentile(late, 50)), p99: Math.round(percentile(late, 99)), max: Math.round(late.at(-1) ?? 0) },
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

export function computeFigures({ records, fakes, servers, finals = new Map(), windows = [] }) {
  const breaks = [];
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
  const providers = {};
  for (const f of fakes) {
    untokened += f.untokened;
    deletedUnknown += f.retractedUnknown ?? 0;
    let n = 0;
    for (const [token, count] of f.delivered) {
      const scheduledOne = scheduledTokens.has(token);
      const into = scheduledOne ? scheduledDelivered : delivered;
      into.set(token, (into.get(token) ?? 0) + count);
      n += count;
      if (!scheduledOne) providerDeliveries += count;
    }
    for (const [token, count] of f.retracted ?? []) deleted.set(token, (deleted.get(token) ?? 0) + count);
    providers[f.name] = { requests: f.requests, delivered: n, distinct: f.delivered.size, ...(f.retracted ? { deleted: f.retracted.size } : {}), faults_served: f.faults };
  }
  if (deletedUnknown) breaks.push(`${deletedUnknown} deletions named a message the Slack fake never posted`);
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
    calls_by_kind: Object.fromEntries(['send', 'schedule', 'retract', 'show_banner', 'list_banners', 'dismiss_banner'].map((k) => [k, records.filter((r) => r.kind === k).length])),
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
    providers,
    rss,
    live_heap: live,
    breaks,
  };
}
