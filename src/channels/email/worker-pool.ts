/**
 * CPU-bound work off the main thread, so that no call can stall the event loop for the
 * others (/healthz included). A few worker threads take jobs from one queue, each job under
 * two deadlines: one for waiting in the queue, one for running. A worker still busy at its
 * job's running deadline is terminated, which stops even a synchronous loop, and a fresh one
 * takes its place.
 *
 * The worker is an ES module given as source text and loaded from a data: URL: it runs the
 * same from src under the test runner as from dist. It imports what it needs by absolute URL
 * (passed in workerData), answers each message with exactly one message, and must not throw.
 */
import { Worker } from 'node:worker_threads';

/** A deadline passed: the job ran longer than `runMs` (`started`), or waited longer than `waitMs`. */
export class WorkerTimeoutError extends Error {
  override readonly name = 'WorkerTimeoutError';
  constructor(
    readonly started: boolean,
    readonly limitMs: number,
  ) {
    super(`${started ? 'the job ran' : 'the job waited for a worker'} longer than ${limitMs} ms`);
  }
}

export interface JobLimits {
  /** How long the job may wait for a worker. */
  waitMs: number;
  /** How long it may run once a worker has it. */
  runMs: number;
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
  /** The worker's ES module source. */
  source: string;
  workerData: unknown;
  /** Workers at most (at least 1). */
  size: number;
  /** Each worker's old-generation heap, in MB. */
  heapMb: number;
  /** An idle worker is let go after this long; the next job starts a new one. */
  idleMs?: number;
}

interface Job {
  request: unknown;
  limits: JobLimits;
  deadline?: NodeJS.Timeout;
  resolve(reply: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker?: Worker;
  job?: Job;
  idle?: NodeJS.Timeout;
}

export class WorkerPool<Request, Reply> {
  private readonly url: URL;
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];

  constructor(private readonly options: WorkerPoolOptions) {
    this.url = new URL(`data:text/javascript,${encodeURIComponent(options.source)}`);
    this.slots = Array.from({ length: Math.max(1, options.size) }, () => ({}));
  }

  /** The worker's reply; WorkerTimeoutError past either limit. */
  run(request: Request, limits: JobLimits): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      const job: Job = { request, limits, resolve: resolve as (reply: unknown) => void, reject };
      job.deadline = setTimeout(() => this.expire(job), limits.waitMs);
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

  private expire(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      job.reject(new WorkerTimeoutError(false, job.limits.waitMs));
      return;
    }
    const slot = this.slots.find((s) => s.job === job);
    if (!slot) return;
    slot.job = undefined;
    void this.discard(slot);
    job.reject(new WorkerTimeoutError(true, job.limits.runMs));
    this.pump();
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      clearTimeout(slot.idle);
      clearTimeout(job.deadline);
      job.deadline = setTimeout(() => this.expire(job), job.limits.runMs);
      slot.job = job;
      (slot.worker ??= this.spawn(slot)).postMessage(job.request);
    }
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(this.url, {
      workerData: this.options.workerData,
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
      // stdout is JSON-RPC's in stdio mode: nothing of a worker's may reach it.
      stdout: true,
    });
    worker.on('message', (reply: unknown) => {
      if (slot.worker !== worker || !slot.job) return;
      const job = slot.job;
      slot.job = undefined;
      this.settle(job, { reply });
      slot.idle = setTimeout(() => void this.discard(slot), this.options.idleMs ?? 60_000).unref();
      this.pump();
    });
    const lost = (err: Error) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const job = slot.job;
      slot.job = undefined;
      if (job) this.settle(job, new WorkerLostError(err));
      this.pump();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`exited with code ${code}`)));
    // A worker never keeps the process alive; a pending job's deadline timer does. (After the
    // listeners: a 'message' listener refs the worker again.)
    worker.unref();
    return worker;
  }

  private settle(job: Job, outcome: { reply: unknown } | Error): void {
    clearTimeout(job.deadline);
    if (outcome instanceof Error) job.reject(outcome);
    else job.resolve(outcome.reply);
  }

  private async discard(slot: Slot): Promise<void> {
    clearTimeout(slot.idle);
    const worker = slot.worker;
    slot.worker = undefined;
    await worker?.terminate();
  }
}
