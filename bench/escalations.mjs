/**
 * Row 12: escalation steps, due → sent (issue 39). `n` sends through send_notification with
 * `escalate` (Slack dry runs; the policy's one step a Slack dry run too) keep a step each in
 * the outbox; every step is moved to the same due second and released by `notify-mcp worker`
 * processes of dist/cli.js: SQLite one worker, PostgreSQL two replicas. A share of the
 * escalations is answered 1.5 s before due, with the workers already up. Figures: each
 * round's p99 of the released steps' lateness (record time − due), median over the rounds,
 * against 2 s; steps sent after an answer that landed before their due (target none), and how
 * many of those steps ended `cancelled`. Baseline: row 9's plain scheduled sends, as many as
 * steps leave, on the same store and workers, its rounds alternating with these. PostgreSQL
 * gets a fresh schema, dropped afterwards; skipped when it does not answer.
 *
 *   node bench/escalations.mjs [--n 1000] [--answered 0.2] [--rounds 3]
 */
import { resolve } from 'node:path';
import { benchArgs } from './lib/args.mjs';
import { inBatches, makeDue, startWorkers, stopWorkers, untilReleased } from './lib/release.mjs';
import { removeTempDirs, serverEnv, tempDir } from './lib/servers.mjs';
import { exact, quantile, ratio, sleep, summarize } from './lib/stats.mjs';
import { round } from './schedule.mjs';
import { PG_URL, freshPgSchema, openApp, pgAvailable } from './store.mjs';

const SECTION = '12. Escalations';
const DIST = resolve(import.meta.dirname, '../dist');
/** One step an hour after the first send: makeDue moves it, so the delay only keeps it from leaving early. */
const ENV = { NOTIFY_PUBLIC_URL: 'https://notify.example.com', NOTIFY_ESCALATIONS: 'page=slack:C0123ABCD@1h' };
const CALL = { via: 'slack', channel: 'C0123ABCD', text: 'Disk 91% full on db-1', escalate: 'page' };

const count = (xs, ok) => xs.filter(ok).length;

/** `n` escalations, every `every`-th answered before due; each released step's lateness, and what became of the answered ones' steps. */
async function escalationRound(env, workers, n, every) {
  const { answerQuestion } = await import(resolve(DIST, 'notification/answer.js'));
  // No release loop in the bench: only the workers release.
  const { app, entry, quiet } = await openApp(env, undefined, { noOutboxRunner: true });
  let children = [];
  try {
    const ctx = { deps: app, store: app.store, config: app.config, log: quiet, client: 'bench', now: app.now };
    const roots = await inBatches(n, 50, async () => {
      const r = await entry.call(CALL, ctx);
      if (r.isError || r.structuredContent?.status !== 'dry_run') throw new Error(`escalating send refused: ${JSON.stringify(r).slice(0, 500)}`);
      return r.structuredContent.id;
    });
    const due = Date.now() + 4_000;
    // Every step in the store: an earlier round's have left or been cancelled, and stay so.
    await makeDue(env, 'escalates', 'ntf_%', due);
    children = startWorkers(env, workers);
    // Answered 1.5 s before due: the workers are up by then, their timers armed for the due second.
    await sleep(due - 1_500 - Date.now());
    const asked = roots.filter((_, i) => i % every === 0);
    const answeredAt = new Map(
      await inBatches(asked.length, 20, async (i) => {
        const a = await answerQuestion({ store: app.store, now: Date.now }, { id: asked[i] }, 'Acknowledge', 'link');
        if (a.kind !== 'recorded') throw new Error(`answer to ${asked[i]} not recorded: ${a.kind}`);
        return [asked[i], a.answer.at];
      }),
    );
    await untilReleased(app.store, due);
    const steps = (await inBatches(n, 100, (i) => app.store.escalationSteps(roots[i]))).flat();
    const records = new Map((await app.store.listDeliveries(4 * n)).map((r) => [r.id, r]));
    const unrecorded = count(steps, (s) => s.state === 'released' && !records.has(s.id));
    if (unrecorded > 0) throw new Error(`${unrecorded} released steps have no delivery record`);
    // An answer at or after due races the release (exactly one wins): not counted either way.
    const before = steps.filter((s) => answeredAt.get(s.escalates) < due);
    return {
      late: steps.filter((s) => records.has(s.id)).map((s) => records.get(s.id).status_updated_at - due),
      before: before.length,
      // `unknown`: a release that may have reached the provider counts as sent.
      sentAfter: count(before, (s) => records.has(s.id) || s.state === 'released' || s.state === 'unknown'),
      cancelled: count(before, (s) => s.state === 'cancelled'),
      leads: [...answeredAt.values()].map((at) => due - at),
      states: steps.map((s) => s.state),
    };
  } finally {
    await stopWorkers(children);
    await app.close();
  }
}

function rows(storeName, esc, base, n, share, workers) {
  const p99s = esc.map((x) => quantile(x.late, 0.99));
  const baseP99s = base.map((x) => quantile(x.late, 0.99));
  const value = summarize(p99s);
  const baseline = summarize(baseP99s);
  const all = (xs, key) => xs.flatMap((x) => x[key]);
  const sum = (key) => esc.reduce((t, x) => t + x[key], 0);
  const p50max = (late) => `p50 ${Math.round(quantile(late, 0.5))}, max ${Math.round(Math.max(...late))} ms`;
  const leads = all(esc, 'leads');
  const states = all(esc, 'states');
  const who = `${workers} worker${workers > 1 ? 's' : ''}`;
  const s = (ms) => (ms / 1000).toFixed(1);
  return [
    {
      section: SECTION,
      name: `${storeName}: escalation step due → sent, ${n.toLocaleString('en-US')} due at once, ${share * 100}% answered before, p99 (${who})`,
      unit: 'ms',
      better: 'lower',
      value,
      baselineName: `row 9's plain scheduled sends, as many as steps leave (${base[0].late.length}), same store, ${who}`,
      baseline,
      ratio: ratio(value, baseline, p99s, baseP99s),
      target: { text: 'p99 ≤ 2,000 ms', absolute: true, max: 2_000 },
      note: `figures: each round's p99 of the released steps' lateness, ${esc.length} rounds alternating with the baseline's; all rounds: ${p50max(all(esc, 'late'))} (baseline ${p50max(all(base, 'late'))}); one step per escalation; slack dry-run; worker processes of dist/cli.js`,
    },
    {
      section: SECTION,
      name: `${storeName}: steps sent after an answer that landed before their due`,
      unit: 'steps',
      better: 'lower',
      value: exact(sum('sentAfter')),
      target: { text: 'none', absolute: true, max: 0 },
      note: `${sum('before')} steps answered ${s(Math.min(...leads))}–${s(Math.max(...leads))} s before due, workers running: ${sum('cancelled')} cancelled; ${count(leads, (ms) => ms <= 0)} answers landed after due (racing, not counted); step states: ${[...new Set(states)].map((st) => `${st} ${count(states, (x) => x === st)}`).join(', ')}`,
    },
  ];
}

/** One engine on one store: `rounds` escalation rounds alternating with the baseline's. */
async function engine(storeName, env, workers, { n, share, rounds }) {
  const every = Math.round(1 / share);
  const esc = [];
  const base = [];
  for (let r = 0; r < rounds; r++) {
    const b = () => round(env, workers, n - Math.ceil(n / every)).then((x) => base.push(x));
    const e = () => escalationRound(env, workers, n, every).then((x) => esc.push(x));
    if (r % 2 === 0) await b().then(e);
    else await e().then(b);
  }
  return rows(storeName, esc, base, n, share, workers);
}

export async function benchEscalations({ n = 1_000, share = 0.2, rounds = 3 } = {}) {
  const o = { n, share, rounds };
  const out = await engine('SQLite', serverEnv({ ...ENV, NOTIFY_DATA_DIR: tempDir() }), 1, o);
  if (!(await pgAvailable())) {
    out.push({ section: SECTION, name: 'PostgreSQL: escalation step due → sent', skipped: `skipped: PostgreSQL at ${PG_URL} did not answer` });
    return out;
  }
  const schema = await freshPgSchema();
  try {
    out.push(...(await engine('PostgreSQL', serverEnv({ ...ENV, NOTIFY_DATA_DIR: tempDir(), DATABASE_URL: schema.url }), 2, o)));
  } finally {
    await schema.drop();
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = benchArgs();
  try {
    const out = await benchEscalations({ n: Number(args.opt('n', 1_000)), share: Number(args.opt('answered', 0.2)), rounds: Number(args.opt('rounds', 3)) });
    const { markdownTable } = await import('./lib/table.mjs');
    process.stdout.write(`${markdownTable(out)}\n`);
  } finally {
    removeTempDirs();
  }
}
