#!/usr/bin/env node
/**
 * A/B of two builds of notify-mcp against the bare server, in one run, interleaved: the way
 * a change is judged before it is kept (bench/results.md, "Changes"). Per round, each server
 * answers `calls` sequential stdio calls (after a warm-up), and each is cold-started once.
 * Besides wall-clock figures it reports the server process's own CPU time
 * (/proc/PID/schedstat, ns on CPU), which a loaded machine disturbs far less.
 *
 * `first` cold-starts each server and times it to its first email answered (tools/list, then
 * one send): what a host that spawns a server per session waits for its first notification.
 *
 *   node bench/ab.mjs A_DIST B_DIST [--rounds 6] [--calls 300] [--era legacy|modern] [--only sms|email|cold|first]
 */
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { EMAIL, SMS } from './calls.mjs';
import { BARE, eraClient, removeTempDirs, serverEnv, tempDir } from './lib/servers.mjs';
import { quantile, summarize } from './lib/stats.mjs';
import { benchArgs } from './lib/args.mjs';

const { opt, positional } = benchArgs();
const [A, B] = positional;
const rounds = Number(opt('rounds', 6));
const calls = Number(opt('calls', 300));
const era = opt('era', 'legacy');
const only = opt('only', undefined);
const servers = { A: [resolve(A, 'cli.js')], B: [resolve(B, 'cli.js')], bare: [BARE] };
const tool = (k) => (k === 'bare' ? 'send' : 'send_notification');

async function connect(kind, env, prior) {
  const transport = new StdioClientTransport({ command: process.execPath, args: servers[kind], env, stderr: 'ignore' });
  const client = eraClient(era);
  await client.connect(transport, prior ? { prior: { kind: 'modern', discover: prior } } : undefined);
  client.cpuMs = () => Number(readFileSync(`/proc/${transport.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  return client;
}

async function perCall(args, label) {
  const clients = {};
  for (const k of Object.keys(servers)) clients[k] = await connect(k, serverEnv(k === 'bare' ? {} : { NOTIFY_DATA_DIR: tempDir() }));
  const call = async (k) => {
    const r = await clients[k].callTool({ name: tool(k), arguments: args });
    if (r.isError || r.structuredContent?.status !== 'dry_run') throw new Error(`${k}: ${JSON.stringify(r).slice(0, 300)}`);
  };
  for (const k of Object.keys(servers)) for (let i = 0; i < 200; i++) await call(k);
  const p50 = { A: [], B: [], bare: [] };
  const cpu = { A: [], B: [], bare: [] };
  for (let r = 0; r < rounds; r++) {
    const order = Object.keys(servers);
    for (let i = 0; i < r % 3; i++) order.push(order.shift());
    for (const k of order) {
      const lat = [];
      const cpu0 = clients[k].cpuMs();
      for (let i = 0; i < calls; i++) {
        const s = performance.now();
        await call(k);
        lat.push(performance.now() - s);
      }
      p50[k].push(quantile(lat, 0.5));
      cpu[k].push(((clients[k].cpuMs() - cpu0) * 1000) / calls);
    }
  }
  for (const c of Object.values(clients)) await c.close();
  report(`${label} p50 ms`, p50);
  report(`${label} server CPU µs per call`, cpu);
}

async function cold(first = false) {
  const envs = { A: serverEnv({ NOTIFY_DATA_DIR: tempDir() }), B: serverEnv({ NOTIFY_DATA_DIR: tempDir() }), bare: serverEnv() };
  const priors = {};
  let last = 0;
  const once = async (k) => {
    const t0 = performance.now();
    const c = await connect(k, envs[k], priors[k]);
    await c.listTools();
    if (first) {
      const r = await c.callTool({ name: tool(k), arguments: EMAIL });
      if (r.isError || r.structuredContent?.status !== 'dry_run') throw new Error(`${k}: ${JSON.stringify(r).slice(0, 300)}`);
    }
    const ms = performance.now() - t0;
    last = c.cpuMs();
    priors[k] ??= era === 'modern' ? c.getDiscoverResult() : undefined;
    await c.close();
    return ms;
  };
  for (const k of Object.keys(servers)) await once(k);
  const ms = { A: [], B: [], bare: [] };
  const cpu = { A: [], B: [], bare: [] };
  for (let r = 0; r < rounds * 2; r++) {
    const order = Object.keys(servers);
    for (let i = 0; i < r % 3; i++) order.push(order.shift());
    for (const k of order) {
      ms[k].push(await once(k));
      cpu[k].push(last);
    }
  }
  const what = first ? 'first email answered' : 'tools/list answered';
  report(`cold start ms, spawn to ${what}`, ms);
  report(`cold start, server CPU ms to ${what}`, cpu);
}

const f = (x) => x.toFixed(x < 10 ? 3 : 1);
function report(label, m) {
  const s = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, summarize(v)]));
  const rat = (k) => m[k].map((x, i) => x / m.bare[i]);
  const line = (k) => {
    const r = summarize(rat(k));
    return `${k}: ${f(s[k].median)} (${f(s[k].lo)}–${f(s[k].hi)}), ratio to bare ${r.median.toFixed(2)}x (${r.lo.toFixed(2)}–${r.hi.toFixed(2)})`;
  };
  // B against A round by round: the two ran back to back, so the machine's drift cancels.
  const ba = summarize(m.B.map((x, i) => x / m.A[i]));
  const pair = `B/A per round: ${ba.median.toFixed(2)}x (${ba.lo.toFixed(2)}–${ba.hi.toFixed(2)})`;
  process.stdout.write(`${label} [${era}, ${m.bare.length} rounds, load ${loadavg()[0].toFixed(2)}]\n  ${line('A')}\n  ${line('B')}\n  bare: ${f(s.bare.median)} (${f(s.bare.lo)}–${f(s.bare.hi)})\n  ${pair}\n`);
}

try {
  process.stdout.write(`A=${A} B=${B}\n`);
  if (!only || only === 'sms') await perCall(SMS, 'sms');
  if (!only || only === 'email') await perCall(EMAIL, 'email');
  if (!only || only === 'cold') await cold();
  if (only === 'first') await cold(true);
} finally {
  removeTempDirs();
}
