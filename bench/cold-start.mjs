/**
 * Row 2: cold start, from spawn to tools/list answered, notify-mcp against the bare server,
 * interleaved, in each protocol era: 2025-11-25 with its initialize handshake, 2026-07-28
 * with none (the client holds the server's DiscoverResult from an earlier, untimed
 * connection, as a host caches the era, so no probe). notify-mcp reuses one data directory,
 * migrated by an untimed first start, so the figure is a restart's, not a first install's.
 */
import { ERA_LABEL } from './calls.mjs';
import { connectStdio, serverEnv, tempDir } from './lib/servers.mjs';
import { ratio, summarize } from './lib/stats.mjs';

async function once(kind, env, era, prior) {
  const t0 = performance.now();
  const conn = await connectStdio(kind, env, era, prior);
  const { tools } = await conn.client.listTools();
  const ms = performance.now() - t0;
  const discover = conn.client.getDiscoverResult();
  await conn.close();
  if (tools.length === 0) throw new Error(`${kind}: empty tool list`);
  return { ms, discover };
}

export async function benchColdStart({ runs = 10, era = 'legacy' } = {}) {
  const envs = { notify: serverEnv({ NOTIFY_DATA_DIR: tempDir() }), bare: serverEnv() };
  const priors = {};
  for (const kind of ['notify', 'bare']) priors[kind] = (await once(kind, envs[kind], era)).discover;
  const res = { notify: [], bare: [] };
  for (let r = 0; r < runs; r++) {
    const order = r % 2 === 0 ? ['notify', 'bare'] : ['bare', 'notify'];
    for (const kind of order) res[kind].push((await once(kind, envs[kind], era, priors[kind])).ms);
  }
  const a = summarize(res.notify);
  const b = summarize(res.bare);
  return [
    {
      section: '2. Cold start',
      name: era === 'legacy' ? `stdio, ${ERA_LABEL[era]}: spawn → initialize → tools/list answered` : `stdio, ${ERA_LABEL[era]}: spawn → tools/list answered (no handshake)`,
      unit: 'ms',
      better: 'lower',
      value: a,
      baselineName: 'bare v2 SDK server',
      baseline: b,
      ratio: ratio(a, b, res.notify, res.bare),
      target: { max: 1.2, text: '≤ 1.2× bare (issue 13)' },
      note: `${runs} runs each, interleaved; existing data dir (restart)`,
    },
  ];
}
