/** Opening the file while another process switches it to WAL: the pragma's SQLITE_BUSY is waited out, within the busy timeout. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/log.js';
import { openDatabase } from './connection.js';

/** better-sqlite3, its `journal_mode` pragma answering SQLITE_BUSY the first `times` times, as a file another process holds does. */
function busyFor(times: number): { Driver: typeof Database; tries: () => number } {
  let tries = 0;
  class Busy extends Database {
    override pragma(source: string, options?: Database.PragmaOptions): unknown {
      if (source.startsWith('journal_mode') && tries++ < times)
        throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      return super.pragma(source, options);
    }
  }
  return { Driver: Busy as unknown as typeof Database, tries: () => tries };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'open-busy-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('opening a SQLite file another process holds', () => {
  it('waits while journal_mode answers SQLITE_BUSY, then opens in WAL mode', () => {
    const busy = busyFor(3);
    const db = openDatabase({ file: join(dir, 'notify.db'), log: silentLogger }, busy.Driver);
    expect(busy.tries()).toBe(4);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('gives up with the driver error once the busy timeout has passed', () => {
    const busy = busyFor(Number.POSITIVE_INFINITY);
    expect(() => openDatabase({ file: join(dir, 'notify.db'), log: silentLogger, busyTimeoutMs: 200 }, busy.Driver)).toThrow(
      /database is locked/,
    );
    expect(busy.tries()).toBeGreaterThan(2);
  });
});
