#!/usr/bin/env node
/**
 * The send tool's own cost, without a transport: CPU time per call of send_notification
 * (dry run, SQLite store in a temp dir, info log lines written to /dev/null) for two builds
 * loaded side by side in one process, rounds alternating, so machine load lands on both.
 * What bench/ab.mjs measures over stdio, less the SDK and the pipe, which both builds share;
 * on a loaded machine its spread is a fraction of ab.mjs's. A judge for changes inside the
 * tool (bench/results.md, "Changes"), not a row of the bench.
 *
 *   node bench/handler-cpu.mjs A_DIST B_DIST [--via sms|email] [--rounds 20] [--calls 500]
 */
import { openSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EMAIL, SMS } from './calls.mjs';
import { removeTempDirs, tempDir } from './lib/servers.mjs';
import { benchArgs } from './lib/args.mjs';

const { opt, positional } = benchArgs();
const dists = positional;
const via = opt('via', 'sms');
const rounds = Number(opt('rounds', 20));
const calls = Number(opt('calls', 500));
const args = via === 'email' ? EMAIL : SMS;
const devNull = openSync('/dev/null', 'w');

async function load(dist) {
  const url = (file) => pathToFileURL(resolve(dist, file)).href;
  const { createApp } = await import(url('app.js'));
  const { loadConfig } = await import(url('config/config.js'));
  const { createLogger } = await import(url('core/log.js'));
  const log = createLogger('info', (line) => writeSync(devNull, line));
  const config = loadConfig({ NOTIFY_DATA_DIR: tempDir() });
  const app = await createApp(config, log);
  const entry = app.catalog[config.defaultProfile].entries.get('send_notification');
  // As src/mcp/server.ts passes it: one logger per tool, profile and caller.
  const callLog = log.child({ tool: 'send_notification', profile: config.defaultProfile, client: 'bench' });
  const once = async () => {
    const ctx = { deps: app, store: app.store, config: app.config, log: callLog, client: 'bench', operator: false, now: app.now, signal: new AbortController().signal };
    const result = await entry.call(args, ctx);
    if (result.isError || result.structuredContent?.status !== 'dry_run') throw new Error(`${dist}: ${JSON.stringify(result).slice(0, 300)}`);
  };
  return { app, once };
}

const builds = [];
for (const dist of dists) builds.push(await load(dist));
for (const b of builds) for (let i = 0; i < 1000; i++) await b.once();
const cpu = builds.map(() => []);
for (let r = 0; r < rounds; r++) {
  const order = builds.map((_, i) => i);
  if (r % 2) order.reverse();
  for (const i of order) {
    const c0 = process.cpuUsage();
    for (let n = 0; n < calls; n++) await builds[i].once();
    const c = process.cpuUsage(c0);
    cpu[i].push((c.user + c.system) / calls);
  }
}
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
process.stdout.write(`${via}, CPU µs per call, ${rounds} rounds × ${calls} calls, load ${loadavg()[0].toFixed(1)}\n`);
dists.forEach((d, i) => {
  const paired = i === 0 ? '' : `, ratio to ${dists[0]} ${q(cpu[i].map((x, r) => x / cpu[0][r]), 0.5).toFixed(2)}x (q1 ${q(cpu[i].map((x, r) => x / cpu[0][r]), 0.25).toFixed(2)}, q3 ${q(cpu[i].map((x, r) => x / cpu[0][r]), 0.75).toFixed(2)})`;
  process.stdout.write(`  ${d}: ${q(cpu[i], 0.5).toFixed(1)} (q1 ${q(cpu[i], 0.25).toFixed(1)}, min ${Math.min(...cpu[i]).toFixed(1)})${paired}\n`);
});
for (const b of builds) await b.app.close();
removeTempDirs();
