#!/usr/bin/env node
/**
 * `npm run soak` (issue 16, "Prove it"): 50 concurrent HTTP clients against the built
 * `notify-mcp --http`, live channels pointed at loopback fakes, with faults injected on a
 * schedule, some sends scheduled a few seconds ahead and some of those retracted, some held
 * for the console, some escalating and answered through their links (each one's final state
 * read once the load is over); once on SQLite, once on PostgreSQL with
 * two replicas sharing the load; then 100,000 seeded generated calls through the real
 * pipeline (test/property/fuzz.property.test.ts).
 * Prints the figures, writes them to soak/results.json and soak/results.md, and exits
 * non-zero when an invariant breaks.
 *
 *   node soak/run.mjs [sqlite] [postgres] [fuzz]     (default: all three)
 *   SOAK_SECONDS=60 SOAK_CLIENTS=50 SOAK_FUZZ_RUNS=100000 SOAK_SEED=16
 *   SOAK_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test  (a fresh database is made beside it)
 *   SOAK_GC_MS=2000 (full GC forced in each server this often; 0: never), SOAK_HEAP_SNAPSHOTS=70,140
 *   SOAK_SCHEDULE_GRACE_S=5 (the servers' NOTIFY_SCHEDULE_GRACE_S: a release later than this expires)
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { fillDisk, makeDataDir } from './lib/disk.mjs';
import { startSlack, startSmtp, startTwilio } from './lib/fakes.mjs';
import { computeFigures, escalatedId } from './lib/figures.mjs';
import { ESCALATIONS, escalationsEnv, httpTokens, OPERATOR, readFinalStates, runLoad } from './lib/load.mjs';
import { startOperator } from './lib/operator.mjs';
import { auditEntries, ROOT, startServer } from './lib/server.mjs';
import { startTcpProxy } from './lib/tcp-proxy.mjs';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 50);
const SEED = Number(process.env.SOAK_SEED ?? 16);
const FUZZ_RUNS = Number(process.env.SOAK_FUZZ_RUNS ?? 100_000);
const PG_BASE = process.env.SOAK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const GC_MS = Number(process.env.SOAK_GC_MS ?? 2000);
const PROBE = { gcMs: GC_MS, heapSnapshots: process.env.SOAK_HEAP_SNAPSHOTS ?? '' };
const BUDGET_MS = 8000;
const POLL_S = 2;
const GRACE_S = Number(process.env.SOAK_SCHEDULE_GRACE_S ?? 5);
/** NOTIFY_APPROVAL_TTL_S: a held send the operator leaves undecided expires after this. */
const APPROVAL_TTL_S = Number(process.env.SOAK_APPROVAL_TTL_S ?? 15);
/**
 * After the load, the longest a scheduled send may still wait past its due time: a release
 * deferred mid-way (the store down) is taken over once its lease (2 budgets + 1 s, as
 * src/notification/outbox.ts) has run out and a poll comes, then takes up to a budget.
 */
const SETTLE_MS = 2 * BUDGET_MS + 1000 + POLL_S * 1000 + BUDGET_MS + 5000;
const started = Date.now();
const step = (s) => process.stderr.write(`[soak ${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s] ${s}\n`);

const SID = 'AC' + '5'.repeat(32);
function providerEnv(smtp, twilio, slack) {
  return {
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'soak <soak@notify.test>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
    TWILIO_ACCOUNT_SID: SID,
    TWILIO_AUTH_TOKEN: 'soak-twilio-token',
    TWILIO_FROM: '+14155550100',
    TWILIO_API_URL: twilio.origin,
    NOTIFY_SMS_ALLOW: '+1415',
    SLACK_BOT_TOKEN: 'xoxb-soak-token',
    SLACK_API_URL: slack.origin,
    NOTIFY_SLACK_ALLOW: 'C0SOAK001,#ops-alerts',
    // Shorter than the default 20 s so hung providers cost a few seconds, not a third of the run.
    NOTIFY_SEND_BUDGET_MS: String(BUDGET_MS),
    // Scheduled sends: a release deferred by a store fault is found again within 2 s (the
    // default poll is 30 s), and one held up past 5 s (the default grace is an hour) expires,
    // so `expired` is a class the faults can reach, not only one the invariant names.
    NOTIFY_SCHEDULE_POLL_S: String(POLL_S),
    NOTIFY_SCHEDULE_GRACE_S: String(GRACE_S),
    NOTIFY_LOG_LEVEL: 'error',
    // Held sends (issue 35): an email to more than two people, or a Slack post with a live
    // broadcast mention, waits for the operator in the console; undecided, it expires.
    NOTIFY_APPROVAL: 'recipients>2,broadcast',
    NOTIFY_APPROVAL_MODE: 'console',
    NOTIFY_SLACK_ALLOW_BROADCAST: '1',
    NOTIFY_APPROVAL_TTL_S: String(APPROVAL_TTL_S),
    NOTIFY_HTTP_TOKENS: httpTokens(CLIENTS),
    NOTIFY_OPERATOR_CLIENTS: OPERATOR,
    // Escalations (issue 39): steps 2-6 s after the first send, so they fall due under each fault.
    NOTIFY_ESCALATIONS: escalationsEnv(),
  };
}

/**
 * Faults by fraction of the run, all in the first half so the second half measures
 * recovery and memory: 5xx bursts, SMTP 421, hangs, resets, then the store fault.
 */
function schedule(fakes, storeFault, log) {
  const [smtp, twilio, slack] = fakes;
  const D = SECONDS * 1000;
  const at = [
    [0.1, 'slack+twilio 5xx burst (60%)', () => { slack.setMode('5xx', 0.6); twilio.setMode('5xx', 0.6); }],
    [0.18, 'smtp 421 (50%)', () => { slack.setMode('ok'); twilio.setMode('ok'); smtp.setMode('421', 0.5); }],
    [0.26, 'providers hang (15%)', () => { smtp.setMode('hang', 0.15); twilio.setMode('hang', 0.15); slack.setMode('hang', 0.15); }],
    [0.34, 'connection resets (40%)', () => { smtp.setMode('ok'); twilio.setMode('reset', 0.4); slack.setMode('reset', 0.4); }],
    [0.42, 'providers healthy; store fault', () => { twilio.setMode('ok'); slack.setMode('ok'); storeFault.start(); }],
    [0.5, 'store fault over', () => storeFault.stop()],
  ];
  const timers = at.map(([f, label, fn]) =>
    setTimeout(() => {
      log.push({ t_s: Math.round(f * SECONDS), fault: label, at: Date.now() });
      step(`fault: ${label}`);
      fn();
    }, f * D),
  );
  return () => timers.forEach(clearTimeout);
}

async function scenario(kind) {
  step(`${kind}: starting fakes and servers`);
  const fakes = await Promise.all([startSmtp(), startTwilio(), startSlack()]);
  const env = providerEnv(...fakes);
  const cleanups = [];
  const notes = [];
  let servers = [];
  let storeFault;
  let dbName;
  let proxy;
  /** Where `notify-mcp audit export` finds the store once the servers are stopped. */
  let storeEnv;
  try {
    if (kind === 'sqlite') {
      const data = makeDataDir('notify-soak-', 256);
      cleanups.push(data.cleanup);
      storeEnv = { NOTIFY_DATA_DIR: data.dir };
      servers = [await startServer('sqlite', { ...env, NOTIFY_DATA_DIR: data.dir }, PROBE)];
      let filled;
      storeFault = data.tmpfs
        ? {
            label: 'SQLite out of space (tmpfs filled to the last block for 8% of the run)',
            start: () => { filled = fillDisk(data.dir); step(`disk filled (${Math.round(filled.bytes / 1048576)} MB filler)`); },
            stop: () => { filled?.free(); filled = undefined; },
          }
        : { label: 'NOT COVERED: SQLite out of space (could not mount a tmpfs; needs root)', start() {}, stop() {} };
      if (!data.tmpfs) notes.push(storeFault.label);
    } else {
      dbName = `soak_${process.pid}_${Date.now()}`;
      const admin = new pg.Client({ connectionString: PG_BASE });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
      const base = new URL(PG_BASE);
      proxy = await startTcpProxy(base.hostname, Number(base.port || 5432));
      const viaProxy = new URL(PG_BASE);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      viaProxy.pathname = `/${dbName}`;
      const direct = new URL(PG_BASE);
      direct.pathname = `/${dbName}`;
      const dataA = makeDataDir('notify-soak-a-', 16);
      const dataB = makeDataDir('notify-soak-b-', 16);
      cleanups.push(dataA.cleanup, dataB.cleanup);
      storeEnv = { NOTIFY_DATA_DIR: dataA.dir, DATABASE_URL: direct.href };
      // Sequentially: both migrate under an advisory lock anyway; this keeps start-up logs apart.
      servers.push(await startServer('postgres-a', { ...env, NOTIFY_DATA_DIR: dataA.dir, DATABASE_URL: viaProxy.href }, PROBE));
      servers.push(await startServer('postgres-b', { ...env, NOTIFY_DATA_DIR: dataB.dir, DATABASE_URL: viaProxy.href }, PROBE));
      storeFault = {
        label: 'PostgreSQL connection cut by the TCP proxy (all connections destroyed, new ones refused for 3 s)',
        start: () => proxy.cut(3000),
        stop() {},
      };
    }
    const records = [];
    const faults = [];
    const deadline = Date.now() + SECONDS * 1000;
    const clear = schedule(fakes, storeFault, faults);
    step(`${kind}: ${CLIENTS} clients for ${SECONDS} s against ${servers.map((s) => s.url).join(' and ')}`);
    const operator = startOperator({ record: (r) => records.push(r), seed: SEED * 31 + 7 });
    await runLoad({ urls: servers.map((s) => s.url), clients: CLIENTS, deadline, seed: SEED, record: (r) => records.push(r), operator, links: linksIn(fakes) });
    clear();
    storeFault.stop?.();
    for (const s of servers) s.endLoad();
    const heldRecords = records.filter((r) => r.kind === 'held' && r.code === 'OK' && r.structured?.status === 'pending_approval');
    const heldIds = new Map(heldRecords.map((r) => [r.structured.id, { id: r.structured.id, client: r.client, url: r.url, heldAt: Date.parse(r.structured.accepted_at ?? '') || Date.now() }]));
    const waiting = records.filter((r) => r.kind === 'schedule' && r.code === 'OK' && r.structured?.status === 'scheduled');
    const ids = new Map(waiting.map((r) => [r.structured.id, { id: r.structured.id, client: r.client, url: r.url, due: Date.parse(r.structured.send_at) }]));
    const lastDue = Math.max(Date.now(), ...[...ids.values()].map((w) => w.due));
    // Escalated first sends: read until none of their steps is waiting (the last due 6 s after its first send).
    const roots = records.filter((r) => escalatedId(r) !== undefined);
    const rootIds = new Map(roots.map((r) => [escalatedId(r), { id: escalatedId(r), client: r.client, url: r.url }]));
    const lastStepDue = Math.max(Date.now(), ...roots.map((r) => (Date.parse(r.structured.accepted_at) || Date.now()) + ESCALATIONS[r.escalate].at(-1)[2]));
    step(`${kind}: load over; reading ${ids.size} scheduled sends (the last due in ${Math.round((lastDue - Date.now()) / 1000)} s; waiting at most ${Math.round((lastDue + SETTLE_MS - Date.now()) / 1000)} s) and ${rootIds.size} escalations`);
    const [finals, escalationFinals] = await Promise.all([
      readFinalStates(ids.values(), lastDue + SETTLE_MS),
      readFinalStates(rootIds.values(), lastStepDue + SETTLE_MS, { stillWaiting: (sc) => (sc.escalation ?? []).some((s) => ['scheduled', 'held', 'releasing'].includes(s.state)) }),
    ]);
    // Held sends: the approvals pages expire the ones past their TTL (the earlier undecided
    // ones; the later stay pending_approval); then each is read as its sender, again while an
    // approved one has not left yet.
    step(`${kind}: reading ${heldIds.size} held sends`);
    await operator.expire(servers.map((s) => s.url));
    const heldFinals = await readFinalStates(heldIds.values(), Date.now() + SETTLE_MS, { waitingStates: ['approved', 'scheduled', 'held'] });
    for (const s of servers) s.exitedEarly = s.exited();
    const storeFaultLabel = storeFault.label;
    await Promise.all(servers.map((s) => s.stop()));
    // The audit chain orders the answers and the steps' claims as they committed.
    const audit = auditEntries(storeEnv, (e) => ['question.answered', 'outbox.scheduled', 'outbox.releasing', 'outbox.expired'].includes(e.kind));
    if (audit.error) step(`${kind}: audit export failed: ${audit.error}`);
    // Each fault lasts until the next one starts; the last entry only ends the store fault.
    // The store fault is the one a release must meet (its claim and record writes fail); the provider faults are reported.
    const windows = faults.slice(0, -1).map((f, i) => ({ label: `${f.t_s} s ${f.fault}`, from: f.at, to: faults[i + 1].at, mustCover: i === faults.length - 2 }));
    // Every answer, decision and final read, and the servers' error lines, for diagnosis of a break.
    const debugFile = join(tmpdir(), `notify-soak-${kind}-${process.pid}.json`);
    writeFileSync(debugFile, JSON.stringify({ records, finals: [...finals], heldFinals: [...heldFinals], escalationFinals: [...escalationFinals], faults, errors: servers.map((s) => ({ server: s.name, lines: s.logLines.filter((l) => /"(error|warn)"/.test(l)) })) }));
    step(`${kind}: every answer and the servers' error lines are in ${debugFile}`);
    const escalation = { policies: Object.fromEntries(Object.entries(ESCALATIONS).map(([name, steps]) => [name, steps.map(([via]) => via)])), finals: escalationFinals, audit: audit.entries, graceMs: GRACE_S * 1000 };
    const figures = computeFigures({ records, fakes, servers, finals, windows, heldFinals, consolePages: operator.pages, escalation });
    return {
      scenario: kind === 'sqlite' ? 'SQLite, one server' : 'PostgreSQL, two replicas',
      seconds: SECONDS,
      clients: CLIENTS,
      faults,
      store_fault: storeFaultLabel,
      ...(proxy ? { proxy: proxy.stats() } : {}),
      notes,
      ...figures,
      server_log_errors: servers.map((s) => ({ server: s.name, error_lines: s.logLines.filter((l) => l.includes('"error"')).length, sample: s.logLines.filter((l) => l.includes('"error"')).slice(0, 2) })),
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(fakes.map((f) => f.close()));
    await proxy?.close();
    if (dbName) {
      const admin = new pg.Client({ connectionString: PG_BASE });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    }
    for (const c of cleanups) c();
  }
}

/** The answer links delivered so far for first send `token` (id `root`) and for its steps, each with where it came from. */
function linksIn(fakes) {
  return (token, root) =>
    fakes.flatMap((f) => [
      ...[...(f.links.get(token) ?? [])].map((t) => ({ token: t, from: `first send (${f.channel})` })),
      ...[...(f.links.get(root) ?? [])].map((t) => ({ token: t, from: `step (${f.channel})` })),
    ]);
}

function fuzz() {
  step(`fuzz: ${FUZZ_RUNS} seeded generated calls (test/property/fuzz.property.test.ts)`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [join(ROOT, 'test/node_modules/vitest/vitest.mjs'), 'run', 'test/property/fuzz.property.test.ts', '--reporter=default', '--testTimeout=0'], {
    cwd: ROOT,
    env: { ...process.env, FUZZ_RUNS: String(FUZZ_RUNS), FUZZ_REPORT: join(ROOT, 'soak/fuzz-report.json') },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let report = {};
  try {
    report = JSON.parse(spawnSync('cat', [join(ROOT, 'soak/fuzz-report.json')]).stdout.toString());
  } catch {}
  return { scenario: 'fuzz', runs: FUZZ_RUNS, seconds: Math.round((Date.now() - t0) / 1000), exit_code: r.status, ...report, breaks: r.status === 0 ? [] : ['fuzz run failed (see its output)'] };
}

function markdown(results) {
  const lines = [`# Soak results`, '', `Run ${new Date(started).toISOString()} on ${cpus().length} cores (load ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end), seed ${SEED}.`, ''];
  for (const r of results) {
    lines.push(`## ${r.scenario}`, '');
    if (r.scenario === 'fuzz') {
      lines.push(`${r.runs} generated calls in ${r.seconds} s, exit ${r.exit_code}.`, '', '```json', JSON.stringify({ ...r, breaks: undefined }, null, 2), '```', '');
    } else {
      lines.push(`${r.clients} clients, ${r.seconds} s. Faults: ${r.faults.map((f) => `${f.t_s} s ${f.fault}`).join('; ')}. Store fault: ${r.store_fault}.`, '');
      lines.push(GC_MS > 0 ? `Each server ran with a full GC forced every ${GC_MS} ms (soak/lib/memprobe.cjs), so RSS and live_heap measure memory held, not garbage not yet collected.` : 'No forced GC (SOAK_GC_MS=0): RSS includes garbage not yet collected; live_heap not measured.', '');
      lines.push('```json', JSON.stringify({ calls: r.calls, calls_by_kind: r.calls_by_kind, answers_by_code: r.answers_by_code, latency_ms: r.latency_ms, sends: r.sends, scheduled: r.scheduled, scheduled_edits: r.scheduled_edits, held: r.held, escalations: r.escalations, providers: r.providers, rss: r.rss, live_heap: r.live_heap, proxy: r.proxy }, null, 2), '```', '');
    }
    lines.push(r.breaks.length ? `**Invariants broken:**\n${r.breaks.map((b) => `- ${b}`).join('\n')}` : 'All invariants held.', '');
  }
  return lines.join('\n');
}

const wanted = process.argv.slice(2).filter((a) => ['sqlite', 'postgres', 'fuzz'].includes(a));
const parts = wanted.length ? wanted : ['sqlite', 'postgres', 'fuzz'];
const results = [];
for (const part of parts) {
  const r = part === 'fuzz' ? fuzz() : await scenario(part);
  results.push(r);
  if (part !== 'fuzz') {
    const { calls, answers_by_code, latency_ms, sends, scheduled, scheduled_edits, held, escalations, rss, live_heap, breaks } = r;
    const brief = (figures) => Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, { ...v, timeline_mb: undefined }]));
    process.stdout.write(`\n== ${r.scenario} ==\n${JSON.stringify({ calls, answers_by_code, latency_ms, sends, scheduled, scheduled_edits, held, escalations, rss: brief(rss), live_heap: brief(live_heap), breaks }, null, 2)}\n`);
  }
}
writeFileSync(join(ROOT, 'soak/results.json'), JSON.stringify({ date: new Date(started).toISOString(), seed: SEED, results }, null, 2) + '\n');
writeFileSync(join(ROOT, 'soak/results.md'), markdown(results));
const broken = results.flatMap((r) => r.breaks.map((b) => `${r.scenario}: ${b}`));
process.stdout.write(broken.length ? `\nSOAK FAILED:\n${broken.map((b) => `- ${b}`).join('\n')}\n` : '\nSoak passed: every invariant held.\n');
process.exitCode = broken.length ? 1 : 0;
