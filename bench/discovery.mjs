/**
 * Row 2: spawn → `server/discover` answered on stdio, the first answer an AI SDK 7 host
 * waits for (1 s, then it falls back to 2025-11-25). The request is written the moment the
 * process is spawned; the time runs to the first line on stdout. notify-mcp answers it from
 * its early reader (src/transports/stdio/early-reader.ts) while the rest loads; the bare v2
 * SDK server answers once it has loaded; node answering a line at once is the floor. The
 * early reader's own cost is in cold start's rows too (spawn → tools/list).
 */
import { spawn } from 'node:child_process';
import { MODERN_VERSION, serverCommand, serverEnv, tempDir } from './lib/servers.mjs';
import { ratio, summarize } from './lib/stats.mjs';

const DISCOVER =
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'server/discover',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      },
    },
  }) + '\n';

/** Answers the first line with a canned result: what node alone costs to start and reply. */
const FLOOR = `process.stdin.once('data', () => process.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\\n'));`;

async function once(args, env) {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.write(DISCOVER);
  const first = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(out.slice(0, nl));
    });
    child.once('close', (code) => reject(new Error(`exited ${code} before answering server/discover`)));
  });
  const ms = performance.now() - t0;
  child.stdin.end();
  await new Promise((resolve) => (child.exitCode === null ? child.once('close', resolve) : resolve()));
  if (!JSON.parse(first).result) throw new Error(`server/discover was not answered with a result: ${first.slice(0, 200)}`);
  return ms;
}

export async function benchDiscovery({ runs = 10 } = {}) {
  const kinds = {
    notify: { args: serverCommand('notify'), env: serverEnv({ NOTIFY_DATA_DIR: tempDir() }) },
    bare: { args: serverCommand('bare'), env: serverEnv() },
    floor: { args: ['-e', FLOOR], env: serverEnv() },
  };
  // Untimed: the data directory is migrated once, as on a restart.
  await once(kinds.notify.args, kinds.notify.env);
  const res = { notify: [], bare: [], floor: [] };
  for (let r = 0; r < runs; r++) {
    const order = r % 2 === 0 ? ['notify', 'bare', 'floor'] : ['floor', 'bare', 'notify'];
    for (const kind of order) res[kind].push(await once(kinds[kind].args, kinds[kind].env));
  }
  const a = summarize(res.notify);
  const b = summarize(res.bare);
  const floor = summarize(res.floor);
  return [
    {
      section: '2. Cold start',
      name: `stdio, ${MODERN_VERSION}: spawn → server/discover answered`,
      unit: 'ms',
      better: 'lower',
      value: a,
      baselineName: 'bare v2 SDK server',
      baseline: b,
      ratio: ratio(a, b, res.notify, res.bare),
      target: { absolute: true, max: 150, text: '≤ 150 ms at the median (issue 27)' },
      note: `${runs} runs each, interleaved; node answering at once: ${floor.median.toFixed(0)} ms (${floor.lo.toFixed(0)}–${floor.hi.toFixed(0)})`,
    },
  ];
}
