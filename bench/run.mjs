#!/usr/bin/env node
/**
 * `npm run bench`: every figure of issue 7 as a ratio against a baseline measured in the
 * same run (absolute times on a shared 2-core machine drift). Prints the table and writes
 * it, with the date, the machine and the command, to bench/results.md.
 *
 *   node bench/run.mjs [--quick]    (--quick: fewer, shorter runs, for trying the bench out)
 */
import { cpus, loadavg, platform, release } from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchAnswers } from './answers.mjs';
import { benchAudit } from './audit.mjs';
import { benchBannerFeed } from './banner-feed.mjs';
import { benchBannerStream } from './banner-stream.mjs';
import { ERA_LABEL, SMS, benchCalls } from './calls.mjs';
import { benchColdStart } from './cold-start.mjs';
import { benchConsolePages } from './console-pages.mjs';
import { benchDiscovery } from './discovery.mjs';
import { benchDryRunFloor } from './dry-run-floor.mjs';
import { benchEscalations } from './escalations.mjs';
import { benchHttpKeyed, benchHttpVsBare } from './http-load.mjs';
import { benchLiveSend } from './live-send.mjs';
import { ERAS, ROOT, removeTempDirs } from './lib/servers.mjs';
import { markdownTable } from './lib/table.mjs';
import { benchStoreSends } from './store.mjs';
import { benchSchedule } from './schedule.mjs';
import { benchTokens } from './tokens.mjs';
import { budgetRows, FULL_ROUND_ENV, fullRoundRows } from './token-budget.mjs';
import { buildCatalog } from '../dist/mcp/catalog.js';
import { loadConfig } from '../dist/config/config.js';
import { benchValidation } from './validation.mjs';

const quick = process.argv.includes('--quick');
const started = Date.now();
const load0 = loadavg();

function step(label) {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${label}\n`);
}

/** A row that could not be measured is reported as skipped with the reason, not dropped. */
async function guarded(section, name, fn) {
  try {
    return await fn();
  } catch (err) {
    step(`${name}: ${err.message}`);
    return [{ section, name, skipped: `not measured: ${String(err.message).split('\n')[0].slice(0, 200)}` }];
  }
}

const rows = [];
try {
  for (const era of ERAS) {
    step(`per-call overhead, stdio, ${ERA_LABEL[era]}`);
    rows.push(...(await benchCalls('stdio', { era, ...(quick ? { runs: 3, calls: 100, warmup: 50 } : {}) })));
  }
  // Email builds the complete MIME message that dry-run records (nodemailer, ~0.6 ms);
  // the SMS row shows the pipeline's own overhead without it.
  for (const era of ERAS) {
    step(`per-call overhead, stdio, sms, ${ERA_LABEL[era]}`);
    const [smsP50] = await benchCalls('stdio', { era, runs: quick ? 3 : 5, calls: quick ? 100 : 300, warmup: quick ? 50 : 200, args: SMS, label: 'sms, dry-run' });
    rows.push(smsP50);
  }
  for (const era of ERAS) {
    step(`dry-run floor: notify-mcp against a bare server with one durable insert, stdio, ${ERA_LABEL[era]}`);
    rows.push(...(await benchDryRunFloor({ era, ...(quick ? { runs: 3, calls: 100, warmup: 50 } : {}) })));
  }
  for (const era of ERAS) {
    step(`per-call overhead, Streamable HTTP, ${ERA_LABEL[era]}`);
    rows.push(
      ...(await guarded('1. Per-call overhead', `http, ${ERA_LABEL[era]}: send_notification (email, dry-run)`, () =>
        benchCalls('http', { era, ...(quick ? { runs: 3, calls: 100, warmup: 50 } : { runs: 5, calls: 200, warmup: 100 }) }),
      )),
    );
  }
  const loadOpts = quick ? { runs: 2, ms: 1_000 } : { runs: 4, ms: 2_000 };
  for (const era of ERAS) {
    step(`HTTP, 50 concurrent clients, ${ERA_LABEL[era]}`);
    rows.push(...(await guarded('6. HTTP under load', `http, ${ERA_LABEL[era]}, 50 concurrent clients`, () => benchHttpVsBare({ era, ...loadOpts }))));
  }
  for (const era of ERAS) {
    step(`HTTP, 50 concurrent clients: keyed against unkeyed sends, ${ERA_LABEL[era]}`);
    rows.push(...(await guarded('6. HTTP under load', `http, ${ERA_LABEL[era]}, 50 concurrent clients: keyed sends`, () => benchHttpKeyed({ era, ...loadOpts }))));
  }
  for (const era of ERAS) {
    step(`cold start, ${ERA_LABEL[era]}`);
    rows.push(...(await benchColdStart({ era, ...(quick ? { runs: 3 } : {}) })));
  }
  step('spawn → server/discover answered');
  rows.push(...(await benchDiscovery(quick ? { runs: 3 } : {})));
  step('context cost');
  rows.push(...benchTokens());
  step('context budget: every profile and tool against issue 40');
  rows.push(...budgetRows(buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }))));
  rows.push(...fullRoundRows(buildCatalog(loadConfig(FULL_ROUND_ENV))));
  rows.push(...(await guarded('8. Live-send overhead', 'live send vs the library alone', () => benchLiveSend(quick ? { calls: 50, warmup: 20, runs: 1 } : {}))));
  step('validation');
  rows.push(...benchValidation(quick ? { runs: 3, ms: 100 } : {}));
  step('store: idempotent sends');
  rows.push(...(await benchStoreSends(quick ? { runs: 3, calls: 50 } : { runs: 5, calls: 100 })));
  step('store: banner feed');
  rows.push(
    ...(await guarded('5. Store', 'GET /banners, 10,000 active banners', () =>
      benchBannerFeed(quick ? { runs: 2, ms: 500 } : {}),
    )),
  );
  step('live feed: 1,000 open streams');
  rows.push(
    ...(await guarded('7. Live feed', 'show_banner reaching 1,000 open streams', () => benchBannerStream(quick ? { rounds: 3 } : {}))),
  );
  step('audit verify: 1,000,000 entries');
  rows.push(...(await guarded('8. Audit', 'audit verify, 1,000,000 entries', () => benchAudit(quick ? { runs: 1 } : {}))));
  step('scheduled sends: 10,000 due at once');
  rows.push(...(await guarded('9. Scheduled sends', 'due → sent, 10,000 due at once', () => benchSchedule(quick ? { n: 1_000 } : {}))));
  step('console views while 100 held 2 MiB emails wait');
  rows.push(...(await guarded('10. Console', 'console views, 100 held 2 MiB emails', () => benchConsolePages(quick ? { runs: 2 } : {}))));
  step('answers: POST → waiting get_notification');
  rows.push(...(await guarded('11. Answers', 'answer → waiting get_notification', () => benchAnswers(quick ? { n: 15 } : {}))));
  step('escalations: 1,000 steps due at once, a fifth answered before');
  rows.push(...(await guarded('12. Escalations', 'escalation steps due → sent, 1,000 due at once', () => benchEscalations(quick ? { n: 200, rounds: 1 } : {}))));
} finally {
  removeTempDirs();
}

const seconds = (Date.now() - started) / 1000;
const table = markdownTable(rows);
const date = new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
const machine = `${cpus().length} cores (nproc), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${platform()} ${release()}`;
const md = `# notify-mcp benchmarks

${date}. Machine: ${machine}. Load average at start ${load0.map((x) => x.toFixed(2)).join(' / ')}, at end ${loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ')} (1/5/15 min). Bench time ${seconds.toFixed(0)} s${quick ? ' (--quick)' : ''}.

Reproduce: \`npm run bench\` (builds, then \`node bench/run.mjs\`).

${table}

How to read it: each figure is the median over repeated runs with the min–max across runs;
the ratio is notify-mcp over its baseline, both measured in this run, runs interleaved
(the spread is over back-to-back pairs). Absolute times drift on a shared 2-core machine;
the ratios are the figures to compare. Per-call rows: SDK \`Client\` → server, one call in
flight, ms per call, once per protocol era (2025-11-25: initialize and, over HTTP, a session;
2026-07-28: no handshake, one stateless request per call); the bare server
(bench/bare-server.mjs) is the same v2 SDK's low-level \`Server\` with one tool that declares
an outputSchema and answers at once, served the same way (serveStdio; createMcpHandler next
to 2025 sessions). HTTP under load (rows 6): 50 SDK clients in the bench process, one call
in flight each, for a fixed time per run; the load generator shares the machine's 2 cores
with both servers, so absolute throughput is bounded by it as much as by the server.
Tokens: o200k_base
(gpt-tokenizer) of \`name\\ndescription\\nJSON(inputSchema)\`; the two single-channel tools
are cited constants (this machine has no network to fetch those servers). Targets are
reported here; the context budgets (rows 3, bench/token-budget.mjs) are also asserted by
test/compat/token-budget.test.ts.
`;
// The log of A/B-measured changes (bench/ab.mjs) below the table outlives each rerun.
const resultsFile = join(ROOT, 'bench/results.md');
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
const changes = previous.indexOf('\n## Changes');
writeFileSync(resultsFile, changes === -1 ? md : `${md}${previous.slice(changes)}`);
process.stdout.write(`\n${table}\n\nWritten to bench/results.md (${seconds.toFixed(0)} s).\n`);
