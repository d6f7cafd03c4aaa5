/**
 * CPU-bound work off the main thread, so that no call can stall the event loop for the
 * others (/healthz included): a few worker threads take jobs from one queue, each job judged
 * by the CPU time its thread used (not a busy machine's wall clock), with a wall-clock
 * backstop; a worker stopped at a limit is terminated and replaced.
 */
import { readFileSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

/**
 * A limit passed. `started` false: the job waited longer than `waitMs` for a worker. Started,
 * `limit` says which: `cpu`, the job's thread used `cpuMs` of CPU (the work itself is too
 * much); `wall`, it used less but ran past the `wallMs` backstop (the machine is too busy).
 */
export class WorkerTimeoutError extends Error {
  override readonly name = 'WorkerTimeoutError';
  constructor(
    readonly started: boolean,
    readonly limitMs: number,
    readonly limit: 'wait' | 'cpu' | 'wall' = started ? 'wall' : 'wait',
  ) {
    super(
      limit === 'wait'
        ? `the job waited for a worker longer than ${limitMs} ms`
        : limit === 'cpu'
          ? `the job used more than ${limitMs} ms of CPU`
          : `the job ran longer than ${limitMs} ms`,
    );
  }
}

export interface JobLimits {
  /** How long the job may wait in the queue for a busy worker. */
  waitMs: number;
  /** The CPU time its thread may use running it. */
  cpuMs: number;
  /** How long it may run, whatever CPU it got: a backstop, well above cpuMs. */
  wallMs: number;
}

/** The worker died under the job: out of memory (`outOfMemory`), or a bug. */
export class WorkerLostError extends Error {
  override readonly name = 'WorkerLostError';
  readonly outOfMemory: boolean;
  constructor(cause: Error) {
    super(`the worker thread died: ${cause.message}`, { cause });
    this.outOfMemory = (cause as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
  }
}

export interface WorkerPoolOptions {
  /**
   * The job module, as ES module source text loaded from a data: URL (it runs the same from
   * src under the test runner as from dist). Its default export takes `workerData` and returns
   * the job handler, `(request) => reply` (or a promise of it); it imports what it needs by
   * absolute URL (passed in workerData). A handler that throws fails its job with the message.
   */
  source: string;
  /** Given to the job module's default export. */
  workerData: unknown;
  /** Workers at most (at least 1). */
  size: number;
  /** Each worker's old-generation heap, in MB. */
  heapMb: number;
  /** An idle worker is let go after this long; the next job starts a new one. */
  idleMs?: number;
}

/**
 * The worker's side: loads the job module, then says it is ready, with the path of its
 * thread's CPU clock when the system has one (Linux: /proc/<pid>/task/<tid>/stat).
 */
const BOOTSTRAP = `
import { readlinkSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
const { port, source, data } = workerData;
let clock = null;
try { clock = '/proc/' + readlinkSync('/proc/thread-self') + '/stat'; } catch {}
const handle = await (await import(source)).default(data);
port.on('message', async (request) => {
  let answer;
  try {
    answer = { reply: await handle(request) };
  } catch (err) {
    answer = { error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(answer);
});
port.postMessage({ ready: clock });
`;

type Answer = { ready: string | null } | { reply: unknown } | { error: string };

/** A worker not ready after this long is taken for broken: a hang guard, far above any real start-up. */
const START_MS = 60_000;

/** Clock ticks per second in /proc/<pid>/task/<tid>/stat (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** CPU ms used so far by the thread whose stat file is `path`; undefined when unreadable. */
function threadCpuMs(path: string): number | undefined {
  try {
    // Fields after the command name, which may hold spaces and parentheses: utime is the 12th, stime the 13th.
    const stat = readFileSync(path, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return undefined;
  }
}

/** The whole process's CPU ms: where no thread clock exists, an upper bound of a worker's. */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

interface Job {
  request: unknown;
  limits: JobLimits;
  timer?: NodeJS.Timeout;
  watch?: NodeJS.Timeout;
  resolve(reply: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker?: Worker;
  port?: MessagePort;
  /** Set once the worker said it is ready. */
  cpuMs?: () => number;
  /** The job running, or the one the worker is starting for. */
  job?: Job;
  /** The running job's CPU reading when it was handed over. */
  cpuAtStart?: number;
  idle?: NodeJS.Timeout;
  starting?: NodeJS.Timeout;
}

export class WorkerPool<Request, Reply> {
  private readonly url: URL;
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];

  constructor(private readonly options: WorkerPoolOptions) {
    this.url = new URL(`data:text/javascript,${encodeURIComponent(BOOTSTRAP)}`);
    this.slots = Array.from({ length: Math.max(1, options.size) }, () => ({}));
  }

  /**
   * The worker's reply; WorkerTimeoutError past a limit. A job may wait `waitMs` for a worker.
   * A worker's start-up (loading its modules) counts against no job's limits: the job it starts
   * for stops waiting in the queue, is handed over once the worker says it is ready, and its
   * limits start then. A job whose wall-clock backstop passes before that gives up as `wait`
   * (the worker goes on starting, for the next job).
   */
  run(request: Request, limits: JobLimits): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      const job: Job = { request, limits, resolve: resolve as (reply: unknown) => void, reject };
      job.timer = setTimeout(() => this.expireWaiting(job), limits.waitMs);
      this.queue.push(job);
      this.pump();
    });
  }

  /** Stops every worker; queued and running jobs fail. */
  async close(): Promise<void> {
    const closed = () => new Error('the worker pool was closed');
    for (const job of this.queue.splice(0)) this.settle(job, closed());
    await Promise.all(
      this.slots.map((slot) => {
        if (slot.job) this.settle(slot.job, closed());
        slot.job = undefined;
        return this.discard(slot);
      }),
    );
  }

  private expireWaiting(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued < 0) return;
    this.queue.splice(queued, 1);
    this.settle(job, new WorkerTimeoutError(false, job.limits.waitMs, 'wait'));
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      clearTimeout(slot.idle);
      clearTimeout(job.timer);
      slot.job = job;
      if (!slot.worker) this.spawn(slot);
      if (slot.cpuMs) {
        this.start(slot, job);
        continue;
      }
      // Past its backstop while the worker starts, the job gives up (busy, not its fault);
      // the worker goes on starting, for the next one.
      // A late timer is no verdict: a ready message already waiting is read first, and the job starts instead.
      job.timer = setTimeout(() => {
        this.drain(slot);
        if (slot.job !== job || slot.cpuMs) return;
        slot.job = undefined;
        this.settle(job, new WorkerTimeoutError(false, job.limits.wallMs, 'wait'));
        this.pump();
      }, job.limits.wallMs);
    }
  }

  private start(slot: Slot, job: Job): void {
    clearTimeout(job.timer);
    slot.cpuAtStart = slot.cpuMs!();
    const { cpuMs, wallMs } = job.limits;
    job.timer = setTimeout(() => this.check(slot, job, true), wallMs);
    // Often enough to stop a runaway job close to its limit, rarely enough to cost nothing.
    job.watch = setInterval(() => this.check(slot, job, false), Math.max(10, Math.min(100, cpuMs / 5)));
    slot.port!.postMessage(job.request);
  }

  /** At the backstop (`atWall`) or on a CPU check: stops the job past a limit, unless its answer is already in. */
  private check(slot: Slot, job: Job, atWall: boolean): void {
    // A busy main thread may see the timer before an answer that came in time.
    this.drain(slot);
    if (slot.job !== job || slot.cpuAtStart === undefined) return;
    const used = slot.cpuMs!() - slot.cpuAtStart!;
    const limit = used >= job.limits.cpuMs ? 'cpu' : atWall ? 'wall' : undefined;
    if (!limit) return;
    slot.job = undefined;
    slot.cpuAtStart = undefined;
    void this.discard(slot);
    this.settle(job, new WorkerTimeoutError(true, limit === 'cpu' ? job.limits.cpuMs : job.limits.wallMs, limit));
    this.pump();
  }

  private drain(slot: Slot): void {
    const port = slot.port;
    if (!port) return;
    for (let m = receiveMessageOnPort(port); m; m = slot.port === port ? receiveMessageOnPort(port) : undefined) {
      this.answered(slot, m.message as Answer);
    }
  }

  private answered(slot: Slot, answer: Answer): void {
    const job = slot.job;
    if ('ready' in answer) {
      clearTimeout(slot.starting);
      const clock = answer.ready;
      slot.cpuMs = clock !== null && threadCpuMs(clock) !== undefined ? () => threadCpuMs(clock) ?? Infinity : processCpuMs;
      if (job) this.start(slot, job);
      else this.idle(slot);
      return;
    }
    if (!job || slot.cpuAtStart === undefined) return;
    slot.job = undefined;
    slot.cpuAtStart = undefined;
    this.settle(job, 'reply' in answer ? { reply: answer.reply } : new Error(answer.error));
    this.idle(slot);
  }

  private idle(slot: Slot): void {
    this.pump();
    if (!slot.job) slot.idle = setTimeout(() => void this.discard(slot), this.options.idleMs ?? 60_000).unref();
  }

  private spawn(slot: Slot): void {
    const { port1, port2 } = new MessageChannel();
    const source = `data:text/javascript,${encodeURIComponent(this.options.source)}`;
    const worker = new Worker(this.url, {
      workerData: { port: port2, source, data: this.options.workerData },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
      // stdout is JSON-RPC's in stdio mode: nothing of a worker's may reach it.
      stdout: true,
    });
    slot.worker = worker;
    slot.port = port1;
    slot.cpuMs = undefined;
    slot.cpuAtStart = undefined;
    slot.starting = setTimeout(() => lost(new Error(`it did not start within ${START_MS} ms`)), START_MS).unref();
    port1.on('message', (answer: Answer) => {
      if (slot.port === port1) this.answered(slot, answer);
    });
    const lost = (err: Error) => {
      if (slot.worker !== worker) return;
      const job = slot.job;
      slot.job = undefined;
      void this.discard(slot);
      // Starting or running, its job fails with it (a worker that cannot start would fail the next as well).
      if (job) this.settle(job, new WorkerLostError(err));
      this.pump();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`exited with code ${code}`)));
    // Neither a worker nor its port keeps the process alive; a pending job's timer does.
    // (After the listeners: a 'message' listener refs them again.)
    worker.unref();
    port1.unref();
  }

  private settle(job: Job, outcome: { reply: unknown } | Error): void {
    clearTimeout(job.timer);
    clearInterval(job.watch);
    if (outcome instanceof Error) job.reject(outcome);
    else job.resolve(outcome.reply);
  }

  private async discard(slot: Slot): Promise<void> {
    clearTimeout(slot.idle);
    clearTimeout(slot.starting);
    const worker = slot.worker;
    slot.port?.close();
    slot.worker = undefined;
    slot.port = undefined;
    slot.cpuMs = undefined;
    slot.cpuAtStart = undefined;
    await worker?.terminate();
  }
}
