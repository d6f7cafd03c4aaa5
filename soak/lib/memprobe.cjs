/**
 * Preloaded into the servers under test by the soak only (NODE_OPTIONS=--require), never
 * part of notify-mcp. Every 0.5 s it appends process.memoryUsage() to the JSON-lines file
 * SOAK_MEMPROBE_FILE; every SOAK_MEMPROBE_GC_MS it forces a full GC first (flag `gc`).
 *
 * Why: RSS alone cannot tell a leak from garbage V8 has not collected yet. V8 lets the old
 * generation grow to a multiple of what survived its last mark-compact before it collects
 * again, so at high throughput RSS climbs for tens of seconds with nothing leaking (issue
 * 16). Memory still reachable after a full GC is what a leak grows.
 *
 * SOAK_MEMPROBE_SNAPSHOTS=70,140 also writes heap snapshots at those seconds (diagnosis;
 * a snapshot costs the process ~100 MB of RSS, so a run taking them says nothing of RSS).
 */
'use strict';
const { appendFileSync } = require('node:fs');
const v8 = require('node:v8');
const vm = require('node:vm');

const file = process.env.SOAK_MEMPROBE_FILE;
if (file) {
  const gcEvery = Number(process.env.SOAK_MEMPROBE_GC_MS ?? 0);
  let gc;
  if (gcEvery > 0) {
    // --expose-gc without putting it on the server's command line.
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc');
  }
  const t0 = Date.now();
  let lastGc = t0;
  const snapshots = (process.env.SOAK_MEMPROBE_SNAPSHOTS ?? '').split(',').filter(Boolean).map(Number);
  for (const s of snapshots) setTimeout(() => v8.writeHeapSnapshot(`${file}.${s}s.heapsnapshot`), s * 1000).unref();
  const timer = setInterval(() => {
    const now = Date.now();
    const forced = gc !== undefined && now - lastGc >= gcEvery;
    if (forced) {
      gc();
      lastGc = now;
    }
    const m = process.memoryUsage();
    try {
      appendFileSync(file, JSON.stringify({ t: now - t0, at: now, gc: forced, rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }) + '\n');
    } catch {
      // A full disk must not end the server under test; the figures then show few samples.
    }
  }, 500);
  timer.unref();
}
