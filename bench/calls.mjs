/**
 * Row 1: per-call overhead. send_notification (email, dry-run) on notify-mcp against the
 * bare server's one tool, both through the SDK Client of the same protocol era, one call in
 * flight at a time. Runs alternate between the two servers (and which goes first), so drift
 * on a shared machine lands on both.
 */
import { connectHttp, connectStdio, serverEnv, startHttpServer, tempDir } from './lib/servers.mjs';
import { quantile, ratio, summarize } from './lib/stats.mjs';

export const SMS = { via: 'sms', to: '+14155550123', body: 'Server down' };
export const EMAIL = { via: 'email', to: 'ops@example.com', subject: 'Deploy done', body_html: '<p>Deployed <b>v1.2</b></p>' };
const TOOL = { notify: 'send_notification', bare: 'send', floor: 'send' };
export const ERA_LABEL = { legacy: '2025-11-25', modern: '2026-07-28' };

export async function callOnce(client, kind, args = EMAIL) {
  const result = await client.callTool({ name: TOOL[kind], arguments: args });
  if (result.isError || result.structuredContent?.status !== 'dry_run') {
    throw new Error(`${kind}: unexpected result ${JSON.stringify(result).slice(0, 500)}`);
  }
}

export async function run(client, kind, n, args) {
  const lat = new Array(n);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await callOnce(client, kind, args);
    lat[i] = performance.now() - s;
  }
  const elapsed = performance.now() - t0;
  return { p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), cps: (n * 1000) / elapsed };
}

/**
 * @param transport 'stdio' | 'http'
 * @param era 'legacy' (2025-11-25) | 'modern' (2026-07-28)
 * @returns rows for p50, p99 and calls/s
 */
export async function benchCalls(transport, { era = 'legacy', runs = 5, calls = 300, warmup = 200, args = EMAIL, dataDirBase, label = 'email, dry-run' } = {}) {
  const conns = {};
  const stops = [];
  try {
    for (const kind of ['notify', 'bare']) {
      const env = serverEnv(kind === 'notify' ? { NOTIFY_DATA_DIR: tempDir(dataDirBase) } : {});
      if (transport === 'stdio') {
        conns[kind] = await connectStdio(kind, env, era);
      } else {
        const srv = await startHttpServer(kind, env);
        stops.push(srv.stop);
        conns[kind] = await connectHttp(srv.url, era);
      }
    }
    for (const kind of ['notify', 'bare']) for (let i = 0; i < warmup; i++) await callOnce(conns[kind].client, kind, args);

    const res = { notify: [], bare: [] };
    for (let r = 0; r < runs; r++) {
      const order = r % 2 === 0 ? ['notify', 'bare'] : ['bare', 'notify'];
      for (const kind of order) res[kind].push(await run(conns[kind].client, kind, calls, args));
    }
    const rows = [];
    for (const [metric, unit, better] of [['p50', 'ms', 'lower'], ['p99', 'ms', 'lower'], ['cps', 'calls/s', 'higher']]) {
      const a = res.notify.map((x) => x[metric]);
      const b = res.bare.map((x) => x[metric]);
      const sa = summarize(a);
      const sb = summarize(b);
      rows.push({
        section: '1. Per-call overhead',
        name: `${transport}, ${ERA_LABEL[era]}: send_notification (${label}) ${metric === 'cps' ? 'calls/s' : metric}`,
        unit,
        better,
        value: sa,
        baselineName: 'bare v2 SDK server, 1 tool with outputSchema',
        baseline: sb,
        ratio: ratio(sa, sb, a, b),
        // Issue 13: email includes the complete MIME build, so its bound is wider than SMS's.
        target: metric === 'p50' ? (args.via === 'email' ? { max: 2, text: 'p50 ≤ 2× bare (email, full MIME)' } : { max: 1.3, text: 'p50 ≤ 1.3× bare' }) : undefined,
        note: `${runs} runs × ${calls} sequential calls after ${warmup} warm-up`,
      });
    }
    return rows;
  } finally {
    for (const c of Object.values(conns)) await c.close().catch(() => {});
    for (const stop of stops) await stop().catch(() => {});
  }
}
