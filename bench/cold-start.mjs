/**
 * Row 2: cold start, from spawn to tools/list answered (initialize included), notify-mcp
 * against the bare server, interleaved. notify-mcp reuses one data directory, migrated by
 * an untimed first start, so the figure is a restart's, not a first install's.
 */
import { connectStdio, serverEnv, tempDir } from './lib/servers.mjs';
import { ratio, summarize } from './lib/stats.mjs';

async function once(kind, env) {
  const t0 = performance.now();
  const conn = await connectStdio(kind, env);
  const { tools } = await conn.client.listTools();
  const ms = performance.now() - t0;
  await conn.close();
  if (tools.length === 0) throw new Error(`${kind}: empty tool list`);
  return ms;
}

export async function benchColdStart({ runs = 10 } = {}) {
  const envs = { notify: serverEnv({ NOTIFY_DATA_DIR: tempDir() }), bare: serverEnv() };
  for (const kind of ['notify', 'bare']) await once(kind, envs[kind]);
  const res = { notify: [], bare: [] };
  for (let r = 0; r < runs; r++) {
    const order = r % 2 === 0 ? ['notify', 'bare'] : ['bare', 'notify'];
    for (const kind of order) res[kind].push(await once(kind, envs[kind]));
  }
  const a = summarize(res.notify);
  const b = summarize(res.bare);
  return [
    {
      section: '2. Cold start',
      name: 'stdio: spawn → initialize → tools/list answered',
      unit: 'ms',
      better: 'lower',
      value: a,
      baselineName: 'bare SDK server',
      baseline: b,
      ratio: ratio(a, b, res.notify, res.bare),
      target: { max: 1.25, text: '≤ 1.25× bare' },
      note: `${runs} runs each, interleaved; existing data dir (restart)`,
    },
  ];
}
