/** better-sqlite3 built for another Node: said so a person can act, not as Node's two ABI numbers. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/log.js';
import { StoreError } from '../errors.js';
import { openDatabase } from './connection.js';

// Node 22's own text for a module built under Node 20.
const NODE_TEXT =
  "The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n" +
  'was compiled against a different Node.js version using\n' +
  'NODE_MODULE_VERSION 115. This version of Node.js requires\n' +
  'NODE_MODULE_VERSION 127. Please try re-compiling or re-installing\n' +
  'the module (for instance, using `npm rebuild` or `npm install`).';

const driverThrowing = (err: Error) =>
  function Driver() {
    throw err;
  } as unknown as typeof Database;

describe('opening SQLite with a native module built for another Node', () => {
  it('says which Node built it, which runs now, and the two ways out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'native-'));
    try {
      const cause = Object.assign(new Error(NODE_TEXT), { code: 'ERR_DLOPEN_FAILED' });
      let thrown: unknown;
      try {
        openDatabase({ file: join(dir, 'notify.db'), log: silentLogger }, driverThrowing(cause));
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(StoreError);
      const message = (thrown as StoreError).message;
      expect(message).toContain(`better-sqlite3 was built for Node 20, and this is Node ${process.versions.node} (${process.execPath})`);
      expect(message).toContain('Run notify-mcp with the Node that installed it');
      expect(message).toContain('npm rebuild better-sqlite3');
      expect((thrown as StoreError).cause).toBe(cause);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves any other error as it was', () => {
    const dir = mkdtempSync(join(tmpdir(), 'native-'));
    const other = new Error('SQLITE_CANTOPEN: unable to open database file');
    expect(() => openDatabase({ file: join(dir, 'notify.db'), log: silentLogger }, driverThrowing(other))).toThrow(other);
    rmSync(dir, { recursive: true, force: true });
  });
});
