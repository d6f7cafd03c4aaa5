/**
 * From the recorded answers and the fakes' ledgers to the figures and the invariants:
 * every answer a result or a coded error; every acknowledged send delivered exactly once;
 * nothing delivered that was not acknowledged, except answers of DELIVERY_UNKNOWN; RSS
 * and the memory reachable after a full GC flat over the second half.
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

export function computeFigures({ records, fakes, servers }) {
  const breaks = [];
  const codes = {};
  for (const r of records) codes[r.code] = (codes[r.code] ?? 0) + 1;
  const lat = records.map((r) => r.ms).sort((a, b) => a - b);
  const sendLat = records.filter((r) => r.kind === 'send').map((r) => r.ms).sort((a, b) => a - b);
  const broken = records.filter((r) => r.broken);
  if (broken.length) breaks.push(`${broken.length} answers were neither a result nor a coded error (${[...new Set(broken.map((r) => r.code))].join(', ')})`);

  const sends = records.filter((r) => r.kind === 'send');
  const okSends = sends.filter((r) => r.code === 'OK');
  const notSent = okSends.filter((r) => r.structured?.status !== 'sent');
  if (notSent.length) breaks.push(`${notSent.length} acknowledged sends were not status "sent" (a live channel fell back to dry-run?)`);
  const acked = new Set(okSends.map((r) => r.token));
  const unknown = new Set(sends.filter((r) => r.code === 'DELIVERY_UNKNOWN').map((r) => r.token));

  const delivered = new Map();
  let providerDeliveries = 0;
  let untokened = 0;
  const providers = {};
  for (const f of fakes) {
    untokened += f.untokened;
    let n = 0;
    for (const [token, count] of f.delivered) {
      delivered.set(token, (delivered.get(token) ?? 0) + count);
      n += count;
    }
    providerDeliveries += n;
    providers[f.name] = { requests: f.requests, delivered: n, distinct: f.delivered.size, faults_served: f.faults };
  }
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
    calls_by_kind: Object.fromEntries(['send', 'show_banner', 'list_banners', 'dismiss_banner'].map((k) => [k, records.filter((r) => r.kind === k).length])),
    answers_by_code: Object.fromEntries(Object.entries(codes).sort((a, b) => b[1] - a[1])),
    errors_by_kind: byKind(records),
    latency_ms: { p50: Math.round(percentile(lat, 50)), p99: Math.round(percentile(lat, 99)), send_p50: Math.round(percentile(sendLat, 50)), send_p99: Math.round(percentile(sendLat, 99)) },
    sends: {
      answers: sends.length,
      acknowledged_answers: okSends.length,
      replayed_answers: okSends.filter((r) => r.structured?.replayed).length,
      acknowledged_distinct: acked.size,
      provider_deliveries: providerDeliveries,
      provider_distinct: delivered.size,
      duplicates: duplicates.length,
      lost: lost.length,
      delivered_with_delivery_unknown: unackedUnknown.length,
      delivered_unacknowledged_other: unackedOther.length,
      delivery_unknown_answers: sends.filter((r) => r.code === 'DELIVERY_UNKNOWN').length,
    },
    providers,
    rss,
    live_heap: live,
    breaks,
  };
}
