/**
 * Dry-run floor (issue 28 item 7): a dry-run SMS through notify-mcp against the floor, a bare
 * v2 SDK server that makes one durable SQLite insert per call (bench/floor-server.mjs), and
 * the floor against the bare server with no insert (bench/bare-server.mjs). All three over
 * stdio, each reached by its own SDK client of the same era (the client validates each
 * server's output schema on every call, so that cost counts). Rounds interleave the three,
 * rotating which goes first, so drift on a shared machine lands on all of them.
 */
import { ERA_LABEL, SMS, callOnce } from './calls.mjs';
import { connectStdio, processCpuMs, serverEnv, tempDir } from './lib/servers.mjs';
import { quantile, ratio, summarize } from './lib/stats.mjs';

const KINDS = ['notify', 'floor', 'bare'];

/**
 * One round: p50 wall per call, and CPU per call of the server (from /proc) plus the client
 * (this process), which under a loaded machine says more than wall time does.
 */
async function round(conn, kind, n) {
  const lat = new Array(n);
  const server0 = processCpuMs(conn.pid);
  const client0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await callOnce(conn.client, kind, SMS);
    lat[i] = performance.now() - s;
  }
  const client = process.cpuUsage(client0);
  const server = processCpuMs(conn.pid) - server0;
  return { p50: quantile(lat, 0.5), cpu: (server + (client.user + client.system) / 1000) / n };
}

export async function benchDryRunFloor({ era = 'legacy', runs = 7, calls = 300, warmup = 200 } = {}) {
  const conns = {};
  try {
    for (const kind of KINDS) {
      conns[kind] = await connectStdio(kind, serverEnv(kind === 'bare' ? {} : { NOTIFY_DATA_DIR: tempDir() }), era);
      // As a host does before calling: the SDK client validates structuredContent against the
      // listed outputSchema only once it holds the tools/list answer.
      await conns[kind].client.listTools();
    }
    for (const kind of KINDS) for (let i = 0; i < warmup; i++) await callOnce(conns[kind].client, kind, SMS);
    const p50 = { notify: [], floor: [], bare: [] };
    const cpu = { notify: [], floor: [], bare: [] };
    for (let r = 0; r < runs; r++) {
      for (let k = 0; k < KINDS.length; k++) {
        const kind = KINDS[(r + k) % KINDS.length];
        const x = await round(conns[kind], kind, calls);
        p50[kind].push(x.p50);
        cpu[kind].push(x.cpu);
      }
    }
    const s = Object.fromEntries(KINDS.map((k) => [k, summarize(p50[k])]));
    const c = Object.fromEntries(KINDS.map((k) => [k, summarize(cpu[k])]));
    const note = `${runs} interleaved rounds × ${calls} sequential calls after ${warmup} warm-up, stdio`;
    return [
      {
        section: '1. Per-call overhead',
        name: `stdio, ${ERA_LABEL[era]}: send_notification (sms, dry-run) p50 against the dry-run floor`,
        unit: 'ms',
        better: 'lower',
        value: s.notify,
        baselineName: 'floor: bare v2 SDK server + 1 durable SQLite insert per call (WAL, synchronous=NORMAL, prepared)',
        baseline: s.floor,
        ratio: ratio(s.notify, s.floor, p50.notify, p50.floor),
        target: { max: 1.25, text: 'p50 ≤ 1.25× the floor (issue 28)' },
        note,
      },
      {
        section: '1. Per-call overhead',
        name: `stdio, ${ERA_LABEL[era]}: send_notification (sms, dry-run) CPU per call, server + client, against the dry-run floor`,
        unit: 'ms',
        better: 'lower',
        value: c.notify,
        baselineName: 'the floor server and its client',
        baseline: c.floor,
        ratio: ratio(c.notify, c.floor, cpu.notify, cpu.floor),
        note: `${note}; server CPU from /proc (10 ms ticks), client CPU of the bench process; floor against bare ${(c.floor.median / c.bare.median).toFixed(2)}×`,
      },
      {
        section: '1. Per-call overhead',
        name: `stdio, ${ERA_LABEL[era]}: the floor server (1 durable SQLite insert per call) p50`,
        unit: 'ms',
        better: 'lower',
        value: s.floor,
        baselineName: 'bare v2 SDK server, 1 tool with outputSchema',
        baseline: s.bare,
        ratio: ratio(s.floor, s.bare, p50.floor, p50.bare),
        note,
      },
    ];
  } finally {
    for (const c of Object.values(conns)) await c.close().catch(() => {});
  }
}

// `node bench/dry-run-floor.mjs [--era legacy|modern] [--quick]` (after `npm run build`).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { removeTempDirs } = await import('./lib/servers.mjs');
  const i = process.argv.indexOf('--era');
  const era = i === -1 ? 'legacy' : process.argv[i + 1];
  const quick = process.argv.includes('--quick');
  try {
    for (const r of await benchDryRunFloor({ era, ...(quick ? { runs: 3, calls: 100, warmup: 50 } : {}) })) {
      console.log(`${r.name}: ${r.value.median.toFixed(3)} ms vs ${r.baseline.median.toFixed(3)} ms: ${r.ratio.median.toFixed(2)}x (pairs ${r.ratio.lo.toFixed(2)}-${r.ratio.hi.toFixed(2)})`);
    }
  } finally {
    removeTempDirs();
  }
  process.exit(0);
}
