import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../../test/helpers/cli.js';
import { WorkerLostError, WorkerPool, WorkerTimeoutError } from './worker-pool.js';

/**
 * A job module that echoes, spins for `spin` ms (a synchronous loop: CPU), sleeps for `sleep`
 * ms (blocked: wall clock passes, no CPU is used, as for a thread a busy machine does not
 * schedule), allocates without end, or throws. With `startSpin`, its start-up spins that long.
 */
const SOURCE = `
export default function setup(data) {
  if (data.starts) Atomics.add(data.starts, 0, 1);
  if (data.startSpin) {
    const until = Date.now() + data.startSpin;
    while (Date.now() < until);
  }
  return (job) => {
    if (job.spin) {
      const until = Date.now() + job.spin;
      while (Date.now() < until);
    }
    if (job.sleep) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, job.sleep);
    if (job.hog) {
      const kept = [];
      for (;;) kept.push(new Array(1e6).fill(kept.length));
    }
    if (job.fail) throw new Error(job.fail);
    return { echo: job.echo, tag: data.tag };
  };
}
`;

const limits = (ms: number) => ({ waitMs: ms, cpuMs: ms, wallMs: ms });

type Job = { echo?: string; spin?: number; sleep?: number; hog?: boolean; fail?: string };
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
  const make = (size = 1, data: Record<string, unknown> = {}) =>
    (pool = new WorkerPool<Job, Reply>({ source: SOURCE, workerData: { tag: 't', ...data }, size, heapMb: 32 }));
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('answers with the worker reply, workerData included', async () => {
    expect(await make().run({ echo: 'hi' }, limits(10_000))).toEqual({ echo: 'hi', tag: 't' });
  });

  it('fails a job whose handler throws, with its message, and keeps the worker', async () => {
    const p = make();
    const err = await rejection(p.run({ fail: 'no such thing' }, limits(10_000)));
    expect(String(err)).toMatch(/no such thing/);
    expect(await p.run({ echo: 'after' }, limits(10_000))).toMatchObject({ echo: 'after' });
  });

  it('stops a job at its CPU limit even in a synchronous loop, and the next job gets a fresh worker', async () => {
    const p = make();
    // Wall clock to spare: the CPU it used is what stops it, however busy the machine.
    const err = await rejection(p.run({ spin: 600_000 }, { waitMs: 10_000, cpuMs: 300, wallMs: 600_000 }));
    expect(err).toBeInstanceOf(WorkerTimeoutError);
    expect(err).toMatchObject({ started: true, limit: 'cpu', limitMs: 300 });
    expect(await p.run({ echo: 'after' }, limits(10_000))).toMatchObject({ echo: 'after' });
  }, 120_000);

  it('does not count wall-clock time the job spent without CPU against its CPU limit', async () => {
    const p = make();
    expect(await p.run({ sleep: 1_000, echo: 'slept' }, { waitMs: 10_000, cpuMs: 200, wallMs: 60_000 })).toMatchObject({
      echo: 'slept',
    });
  });

  it('stops a job at its wall-clock backstop, as a wall limit, when it used little CPU', async () => {
    const p = make();
    const err = await rejection(p.run({ sleep: 60_000 }, { waitMs: 10_000, cpuMs: 60_000, wallMs: 400 }));
    expect(err).toBeInstanceOf(WorkerTimeoutError);
    expect(err).toMatchObject({ started: true, limit: 'wall', limitMs: 400 });
    expect(await p.run({ echo: 'after' }, limits(10_000))).toMatchObject({ echo: 'after' });
  });

  it("does not count a worker's start-up against its first job's wait or CPU", async () => {
    // A start-up of 1.5 s of CPU; the job may wait 200 ms and use 300 ms of CPU.
    const p = make(1, { startSpin: 1_500 });
    expect(await p.run({ echo: 'first' }, { waitMs: 200, cpuMs: 300, wallMs: 60_000 })).toMatchObject({ echo: 'first' });
  });

  it('keeps a starting worker for the next job when the first gives up on it', async () => {
    const starts = new Int32Array(new SharedArrayBuffer(4));
    const p = make(1, { startSpin: 1_500, starts });
    const err = await rejection(p.run({ echo: 'first' }, { waitMs: 10_000, cpuMs: 10_000, wallMs: 300 }));
    expect(err).toMatchObject({ started: false, limit: 'wait', limitMs: 300 });
    expect(await p.run({ echo: 'second' }, limits(60_000))).toMatchObject({ echo: 'second' });
    expect(Atomics.load(starts, 0)).toBe(1);
  });

  it('takes an answer that came in time even when the event loop sees the deadline first', async () => {
    const p = make();
    await p.run({ echo: 'warm' }, limits(10_000));
    const answered = p.run({ echo: 'in time' }, { waitMs: 10_000, cpuMs: 10_000, wallMs: 300 });
    // The worker answers at once; this thread is busy past the backstop before it can read it.
    const until = Date.now() + 1_000;
    while (Date.now() < until);
    expect(await answered).toMatchObject({ echo: 'in time' });
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
    const waiting = await rejection(p.run({ echo: 'queued' }, { waitMs: 200, cpuMs: 10_000, wallMs: 10_000 }));
    expect(waiting).toBeInstanceOf(WorkerTimeoutError);
    expect(waiting).toMatchObject({ started: false, limit: 'wait', limitMs: 200 });
    expect(await running).toMatchObject({ started: true });
  });

  it('gives a job its full running time however long it waited', async () => {
    const p = make(1);
    const first = p.run({ spin: 2_500, echo: 'first' }, limits(10_000));
    // Waits 2.5 s for the worker, longer than its running limit: that limit starts with the run.
    const second = p.run({ spin: 400, echo: 'second' }, { waitMs: 10_000, cpuMs: 2_000, wallMs: 60_000 });
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
         process.stdout.write(JSON.stringify(await pool.run({ echo: 'done' }, { waitMs: 10000, cpuMs: 10000, wallMs: 10000 })) + '\\n');`,
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
