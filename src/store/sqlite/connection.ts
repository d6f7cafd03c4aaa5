/**
 * Opening the SQLite file: WAL mode, the busy timeout, migrations under an immediate
 * transaction, the shared statements bound to better-sqlite3, and the retry while another
 * process holds the lock.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';
import type { Logger } from '../../core/log.js';
import { StoreError } from '../errors.js';
import { LATEST_VERSION, MIGRATIONS } from '../migrations.js';
import type { Statement } from '../sql/dialect.js';
import type { Row } from '../sql/rows.js';

export const SQLITE_FILE_NAME = 'notify.db';

export function sqliteFile(dataDir: string): string {
  return join(dataDir, SQLITE_FILE_NAME);
}

export interface SqliteStoreOptions {
  /** Path of the database file; its directory is created if missing. */
  file: string;
  log: Logger;
  /**
   * How long a call waits for another process's lock before failing (default 10 s): in
   * SQLite at start-up (migrations), then in short synchronous waits between timers.
   */
  busyTimeoutMs?: number;
}

/** How long one statement may wait for a lock inside SQLite (synchronously). */
export const SYNC_BUSY_MS = 20;
export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

function migrate(db: Database.Database, log: Logger): void {
  const run = db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
    const current = row.v ?? 0;
    if (current > LATEST_VERSION) {
      throw new StoreError(
        `the SQLite store is at schema version ${current}, newer than this build knows (${LATEST_VERSION}); upgrade notify-mcp`,
      );
    }
    let applied = 0;
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      db.exec(m.sqlite);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
      log.debug('store migration applied', { store: 'sqlite', version: m.version, migration: m.name });
      applied++;
    }
    // One line for the lot: a first start applies every migration, and a line each buried the one that says the server is waiting.
    if (applied) log.info('store migrated', { store: 'sqlite', from: current, to: LATEST_VERSION, migrations: applied });
  });
  // IMMEDIATE: two processes starting together migrate one after the other, never both.
  run.immediate();
}

/** Node.js releases by their NODE_MODULE_VERSION (the native ABI), for a message a person can act on. */
const NODE_BY_ABI: Readonly<Record<string, string>> = { '108': '18', '115': '20', '120': '21', '127': '22', '131': '23', '137': '24' };
const nodeOfAbi = (abi: string): string => (NODE_BY_ABI[abi] ? `Node ${NODE_BY_ABI[abi]}` : `NODE_MODULE_VERSION ${abi}`);

/**
 * The error of better-sqlite3's native module built for another Node.js than this one, said
 * so a person can fix it; undefined for any other error. Node's own text names two ABI numbers
 * and neither Node release, and a client that starts the server with whatever `node` is first
 * on its PATH (npx puts its own there) meets it as a crash at start.
 */
export function nativeModuleMismatch(err: unknown): StoreError | undefined {
  const text = err instanceof Error ? err.message : '';
  const m = /NODE_MODULE_VERSION (\d+)[\s\S]*NODE_MODULE_VERSION (\d+)/.exec(text);
  if (!m) return undefined;
  return new StoreError(
    `better-sqlite3 was built for ${nodeOfAbi(m[1]!)}, and this is Node ${process.versions.node} (${process.execPath}). ` +
      'Run notify-mcp with the Node that installed it (name that node by its absolute path in a client\'s or servers file\'s "command"), ' +
      'or run `npm rebuild better-sqlite3` under this one.',
    { cause: err },
  );
}

/** `new Driver(...)`, with an ABI mismatch of its native module said plainly (nativeModuleMismatch). */
export function openDriver(Driver: typeof Database, file: string, options: Database.Options): Database.Database {
  try {
    return new Driver(file, options);
  } catch (err) {
    throw nativeModuleMismatch(err) ?? err;
  }
}

/**
 * A pragma at open, tried again while another process holds the file: a replica starting
 * beside one that is switching the file to WAL gets SQLITE_BUSY from `journal_mode` at once,
 * without SQLite's busy timeout. Synchronous (the store is not open yet), for at most `timeoutMs`.
 */
function openPragma(db: Database.Database, text: string, timeoutMs: number): unknown {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return db.pragma(text, { simple: true });
    } catch (err) {
      if (!/^SQLITE_BUSY/.test(String((err as { code?: unknown }).code)) || Date.now() >= until) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
}

/** The database file opened in WAL mode and migrated; `Driver` is better-sqlite3's Database, imported when a store is opened. */
export function openDatabase(opts: SqliteStoreOptions, Driver: typeof Database): Database.Database {
  mkdirSync(dirname(opts.file), { recursive: true });
  const db = openDriver(Driver, opts.file, { timeout: opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
  try {
    const timeoutMs = Math.trunc(opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
    db.pragma(`busy_timeout = ${timeoutMs}`);
    const mode = openPragma(db, 'journal_mode = WAL', timeoutMs);
    if (String(mode).toLowerCase() !== 'wal') throw new StoreError(`could not put ${opts.file} in WAL mode (got ${String(mode)})`);
    // NORMAL under WAL: a commit survives a process crash (SIGKILL included); a power loss
    // may undo the last commits. FULL would fsync every delivery record, most of what a
    // dry-run send costs.
    openPragma(db, 'synchronous = NORMAL', timeoutMs);
    migrate(db, opts.log);
  } catch (err) {
    db.close();
    throw err;
  }
  opts.log.debug('store opened', { store: 'sqlite', file: opts.file });
  return db;
}

/** A shared statement prepared for better-sqlite3, run synchronously (inside a transaction, too). */
export interface Bound {
  run(params: readonly unknown[]): Database.RunResult;
  get(params: readonly unknown[]): Row | undefined;
  all(params: readonly unknown[]): Row[];
}

/**
 * `$1…$n` each once and in order become `?` and bind by position; otherwise they bind as
 * named parameters (`$1` is the parameter named "1").
 */
function bind(db: Database.Database, s: Statement): Bound {
  const marks = [...s.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
  if (marks.every((n, i) => n === i + 1)) {
    const stmt = db.prepare(s.text.replace(/\$\d+/g, '?'));
    return { run: (p) => stmt.run(...p), get: (p) => stmt.get(...p) as Row | undefined, all: (p) => stmt.all(...p) as Row[] };
  }
  const stmt = db.prepare(s.text);
  const named = (p: readonly unknown[]) => Object.fromEntries(p.map((v, i) => [String(i + 1), v]));
  return { run: (p) => stmt.run(named(p)), get: (p) => stmt.get(named(p)) as Row | undefined, all: (p) => stmt.all(named(p)) as Row[] };
}

export const parseJson = (v: unknown): unknown => JSON.parse(v as string);

export function sharedStatements(db: Database.Database): (s: Statement) => Bound {
  const bound = new Map<Statement, Bound>();
  return (s) => {
    let b = bound.get(s);
    if (!b) bound.set(s, (b = bind(db, s)));
    return b;
  };
}

const isBusy = (err: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((err as { code?: unknown } | null)?.code ?? ''));

/**
 * `call` retried while another process holds the lock it needs, up to `timeoutMs` in all,
 * with jittered waits on timers between attempts. A retry is safe: each store method is one
 * statement or one transaction, and a busy one changed nothing (a method's later,
 * idempotent read may repeat its write: dismissBanner).
 */
export async function retryWhileBusy<T>(call: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    try {
      return await call();
    } catch (err) {
      const left = deadline - Date.now();
      if (!isBusy(err) || left <= 0) throw err;
      await new Promise((r) => setTimeout(r, Math.min(left, wait / 2 + Math.random() * wait)));
    }
  }
}
