/**
 * The records of a claimed batch's dry runs, written together (./outbox.ts): a dry run's
 * record is its send, so a batch of them costs one store write per turn of the event loop.
 */
import type { RecordWrite, ReleaseRecord } from '../store/ports/index.js';
import type { PipelineDeps } from './send-deps.js';

/**
 * The records of one claimed batch's dry runs, written in one store call per turn of the
 * event loop: each release waits only for the others that reached their record by then.
 */
export interface RecordBatch {
  write(item: ReleaseRecord): Promise<RecordWrite>;
}

export function recordBatch(deps: PipelineDeps, owner: string): RecordBatch {
  let queue: { item: ReleaseRecord; done: (w: RecordWrite) => void; failed: (err: unknown) => void }[] = [];
  const flush = () => {
    const items = queue;
    queue = [];
    deps.store
      .recordReleases(
        owner,
        items.map((q) => q.item),
        deps.now(),
      )
      .then(
        (written) => items.forEach((q, i) => q.done(written[i]!)),
        (err: unknown) => items.forEach((q) => q.failed(err)),
      );
  };
  return {
    write: (item) =>
      new Promise<RecordWrite>((done, failed) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ item, done, failed });
      }),
  };
}
