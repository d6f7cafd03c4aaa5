import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../../test/helpers/cli.js';
import { WorkerLostError, WorkerPool, WorkerTimeoutError } from './worker-pool.js';

/** A worker that echoes, spins for `spin` ms (a synchronous loop), or allocates without end. */
const SOURCE = `
import { parentPort, workerData } from 'node:worker_threads';
parentPort.on('message', (job) => {
  if (job.spin) {
    const until = Date.now() + job.spin;
    while (Date.now() < until);
  }
  if (job.hog) {
    const kept = [];
    for (;;) kept.push(new Array(1e6).fill(kept.length));
  }
  parentPort.postMessage({ echo: job.echo, tag: workerData.tag });
});
`;

const limits = (ms: number) => ({ waitMs: ms, runMs: ms });

type Job = { echo?: string; spin?: number; hog?: boolean };
type Reply = { echo?: string; tag: string };

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('WorkerPool', () => {
  let pool: WorkerPool<Job, Reply> | undefined;
  const make = (size = 1) => (pool = new WorkerPool<Job, Reply>({ source: SOURCE, workerData: { tag: 't' }, size, heapMb: 32 }));
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('answers with the worker reply, workerData included', async () => {
    expect(await make().run({ echo: 'hi' }, limits(10_000))).toEqual({ echo: 'hi', tag: 't' });
  });

  it('stops a job at its deadline even in a synchronous loop, and the next job gets a fresh worker', async () => {
    const p = make();
    const err = await rejection(p.run({ spin: 60_000 }, limits(300)));
    expect(err).toBeInstanceOf(WorkerTimeoutError);
    expect(err).toMatchObject({ started: true, limitMs: 300 });
    expect(await p.run({ echo: 'after' }, limits(10_000))).toMatchObject({ echo: 'after' });
  });

  it('keeps the event loop free while a job spins', async () => {
    const p = make();
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    await p.run({ spin: 500 }, limits(10_000));
    clearInterval(ticker);
    // Had the spin run on this thread, no tick could have happened.
    expect(ticks).toBeGreaterThan(0);
  });

  it('fails a job that waited past its deadline for a busy worker, as not started', async () => {
    const p = make(1);
    const running = rejection(p.run({ spin: 60_000 }, limits(1_500)));
    const waiting = await rejection(p.run({ echo: 'queued' }, { waitMs: 200, runMs: 10_000 }));
    expect(waiting).toBeInstanceOf(WorkerTimeoutError);
    expect(waiting).toMatchObject({ started: false, limitMs: 200 });
    expect(await running).toMatchObject({ started: true });
  });

  it('gives a job its full running time however long it waited', async () => {
    const p = make(1);
    const first = p.run({ spin: 2_500, echo: 'first' }, limits(10_000));
    // Waits 2.5 s for the worker, longer than its running limit: that limit starts with the run.
    const second = p.run({ spin: 400, echo: 'second' }, { waitMs: 10_000, runMs: 2_000 });
    expect(await first).toMatchObject({ echo: 'first' });
    expect(await second).toMatchObject({ echo: 'second' });
  });

  it('runs jobs side by side with more than one worker', async () => {
    const p = make(2);
    const done: string[] = [];
    await Promise.all([
      p.run({ spin: 3_000, echo: 'spin' }, limits(30_000)).then((r) => done.push(r.echo!)),
      p.run({ echo: 'beside' }, limits(30_000)).then((r) => done.push(r.echo!)),
    ]);
    expect(done).toEqual(['beside', 'spin']);
  });

  it('reports a worker that ran out of memory, and recovers', async () => {
    const p = make();
    const err = await rejection(p.run({ hog: true }, limits(30_000)));
    expect(err).toBeInstanceOf(WorkerLostError);
    expect((err as WorkerLostError).outOfMemory).toBe(true);
    expect(await p.run({ echo: 'again' }, limits(10_000))).toMatchObject({ echo: 'again' });
  });

  it('lets the process exit while a worker idles (npm run build first)', async () => {
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { WorkerPool } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/channels/email/worker-pool.js')).href)});
         const pool = new WorkerPool({ source: ${JSON.stringify(SOURCE)}, workerData: { tag: 'x' }, size: 1, heapMb: 32 });
         process.stdout.write(JSON.stringify(await pool.run({ echo: 'done' }, { waitMs: 10000, runMs: 10000 })) + '\\n');`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const guard = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise((resolve) => child.on('exit', resolve));
    clearTimeout(guard);
    expect(out.trim()).toBe('{"echo":"done","tag":"x"}');
    expect(code).toBe(0);
  });

  it('fails what is pending when closed', async () => {
    const p = make(1);
    const settled = Promise.allSettled([p.run({ spin: 60_000 }, limits(10_000)), p.run({ echo: 'x' }, limits(10_000))]);
    await p.close();
    for (const outcome of await settled) {
      expect(outcome.status).toBe('rejected');
      expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/closed/);
    }
  });
});
