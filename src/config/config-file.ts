/**
 * A configuration file's text (`--env-file`, the gateway's servers file), read through one
 * descriptor that is checked first: a device (`/dev/zero`) or a FIFO was read without end,
 * and a wrong path to a large file read whole. Opened non-blocking so that a FIFO with no
 * writer is refused rather than waited on. Errors are the filesystem's (with their `code`)
 * or an Error naming the refusal.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';

export function readConfigFile(path: string, maxBytes: number): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error('not a regular file');
    if (stat.size > maxBytes) throw new Error(`over ${maxBytes} bytes`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
