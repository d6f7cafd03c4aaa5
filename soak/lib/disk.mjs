/**
 * SQLite out of space, for real: the data directory is a small tmpfs mounted for the run,
 * and the soak fills it with a filler file on schedule (then deletes it). Mounting needs
 * root (CAP_SYS_ADMIN); without it the fault is reported as not covered.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function makeDataDir(prefix, sizeMb) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return { dir, tmpfs: true, cleanup: () => { try { execFileSync('umount', ['-l', dir], { stdio: 'ignore' }); } catch {} rmSync(dir, { recursive: true, force: true }); } };
  } catch {
    return { dir, tmpfs: false, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  }
}

/** Fills the filesystem of `dir` to the last block; returns a function that frees it again. */
export function fillDisk(dir) {
  const file = join(dir, 'soak-filler.bin');
  const fd = openSync(file, 'w');
  let bytes = 0;
  for (const size of [1 << 20, 1 << 12, 1 << 9]) {
    const chunk = Buffer.alloc(size, 0x5a);
    for (;;) {
      try {
        writeSync(fd, chunk);
        bytes += size;
      } catch {
        break; // ENOSPC: this chunk size no longer fits
      }
    }
  }
  closeSync(fd);
  return { bytes, free: () => unlinkSync(file) };
}
