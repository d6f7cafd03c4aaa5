/**
 * A database that is down or cut mid-run is transient: the store throws
 * StoreUnavailableError, a send answers STORE_UNAVAILABLE with retry_after_s (before the
 * provider call: nothing was sent), a send whose provider answered keeps its answer, and
 * the same store serves again once the database is back. For real: SQLite out of pages
 * (`max_page_count`), and PostgreSQL behind a TCP proxy (the soak's) that cuts every
 * connection and refuses new ones for a while.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { connectChannels } from '../../src/channels/connect.js';
import { loadConfig } from '../../src/config/config.js';
import { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { sendNotification, type PipelineDeps } from '../../src/notification/pipeline.js';
import type { Provider } from '../../src/providers/types.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { classifyStoreFault } from '../../src/store/faults.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { SYNC_BUSY_MS } from '../../src/store/sqlite/connection.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { failureResult } from '../../src/mcp/tool-result.js';
import { serveHttp } from '../../src/transports/http/listener.js';
import { startTcpProxy, type TcpProxy } from '../../soak/lib/tcp-proxy.mjs';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';

class CountingSms implements Provider<unknown> {
  readonly name = 'fake';
  sent = 0;
  /** Runs inside the provider call, after it "sent": to break the store at that moment. */
  afterSend?: () => unknown;
  async send() {
    this.sent++;
    await this.afterSend?.();
    return { providerMessageId: `SM${this.sent}` };
  }
}

async function pipeline(store: Store, sms: CountingSms): Promise<PipelineDeps> {
  const config = loadConfig({
    NOTIFY_DATA_DIR: '/unused',
    TWILIO_ACCOUNT_SID: 'AC0',
    TWILIO_AUTH_TOKEN: 'secret',
    TWILIO_FROM: '+14155550000',
    NOTIFY_SMS_ALLOW: '+1415',
  });
  return { config, store, channels: await connectChannels(config, silentLogger, { sms }), log: silentLogger, now: Date.now };
}

const text = (key?: string) => ({ via: 'sms', to: '+14155550123', body: 'Disk full', ...(key ? { idempotency_key: key } : {}) });
const send = (deps: PipelineDeps, key?: string) => sendNotification(deps, 'sms', text(key), { client: 'bot' });

async function failure(p: Promise<unknown>): Promise<NotifyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotifyError);
  return err as NotifyError;
}

describe('classifyStoreFault', () => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
  it.each([
    ['ECONNRESET', coded('ECONNRESET', 'read ECONNRESET')],
    ['ECONNREFUSED', coded('ECONNREFUSED')],
    ['pg: connection terminated', new Error('Connection terminated unexpectedly')],
    ['pg: connect timeout', new Error('timeout exceeded when trying to connect')],
    ['pg: query timeout', new Error('Query read timeout')],
    ['pg 57P01 admin shutdown', coded('57P01')],
    ['pg 53300 too many connections', coded('53300')],
    ['pg 08006 connection failure', coded('08006')],
    ['pg 40001 serialization failure', coded('40001')],
    ['SQLITE_FULL', coded('SQLITE_FULL', 'database or disk is full')],
    ['SQLITE_BUSY', coded('SQLITE_BUSY')],
    ['SQLITE_BUSY_SNAPSHOT', coded('SQLITE_BUSY_SNAPSHOT')],
    ['SQLITE_IOERR_WRITE', coded('SQLITE_IOERR_WRITE')],
  ])('%s is transient', (_name, err) => {
    const fault = classifyStoreFault(err, 'x');
    expect(fault).toBeInstanceOf(StoreUnavailableError);
    expect(fault!.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(fault!.cause).toBe(err);
  });
  it.each([
    ['a constraint we broke', coded('23505')],
    ['bad SQL', coded('42601')],
    ['SQLITE_CONSTRAINT', coded('SQLITE_CONSTRAINT_UNIQUE')],
    ['SQLITE_FULLTEXT is no such code', coded('SQLITE_FULLTEXT')],
    ['a TypeError', new TypeError('boom')],
    ['a thrown string', 'ECONNRESET'],
  ])('%s is not', (_name, err) => {
    expect(classifyStoreFault(err, 'x')).toBeUndefined();
  });
});

describe('SQLite out of space (max_page_count)', () => {
  let dir: string;
  let store: SqliteStore;
  let sms: CountingSms;
  let deps: PipelineDeps;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-faults-'));
    store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
    store.db.exec('CREATE TABLE filler (x TEXT)');
    sms = new CountingSms();
    deps = await pipeline(store, sms);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Caps the file at its current size, then fills the pages the send path writes to, rows
   * shrinking down to the smallest, so that a write of a real call's size needs a page the
   * cap refuses: SQLITE_FULL, as on a full disk.
   */
  async function fill(): Promise<void> {
    store.db.pragma(`max_page_count = ${Number(store.db.pragma('page_count', { simple: true }))}`);
    const untilFull = async (write: (size: number, i: number) => Promise<unknown>) => {
      for (const size of [1024, 128, 16, 1]) {
        for (let i = 0; ; i++) {
          const err = await write(size, i).then(
            () => undefined,
            (e: unknown) => e,
          );
          if (err === undefined) continue;
          expect(err).toBeInstanceOf(StoreUnavailableError);
          break;
        }
      }
    };
    const now = Date.now();
    await untilFull((size, i) => store.addOptOut('x', `${'r'.repeat(size)}${i}`, now));
    await untilFull((size, i) => store.claimIdempotency(`${'k'.repeat(size)}${i}`, 'h', now, { ttlMs: 86_400_000, staleAfterMs: 20_000 }));
    await untilFull((size, i) =>
      store.writeRecord({
        id: `f${randomBytes(4).toString('hex')}`,
        via: 'x',
        status: 'dry_run',
        provider: 'x',
        provider_message_id: null,
        payload: 'p'.repeat(size),
        error_code: null,
        attempts: 0,
        attempt_log: [],
        latency_ms: 0,
        client: null,
        idempotency_key: null,
        created_at: now,
        provider_status: null,
        provider_status_code: null,
        status_updated_at: now,
      }),
    );
  }
  function free(): void {
    store.db.pragma('max_page_count = 1073741823');
  }

  it('before the provider call: STORE_UNAVAILABLE with retry_after_s, nothing sent; the same call sends once the disk has room', async () => {
    await fill();
    // The idempotency claim is the write before the provider call (a call without a key and
    // without rate limits writes only after it, and is covered below).
    for (let i = 0; i < 2; i++) {
      const err = await failure(send(deps, 'k1'));
      expect(err.code).toBe('STORE_UNAVAILABLE');
      expect(err.details.retryAfterS).toBeGreaterThanOrEqual(1);
      expect(err.details.via).toBe('sms');
      expect(err.message).toMatch(/^Try the same call again in \d+ s.*Nothing was sent: /);
    }
    expect(sms.sent).toBe(0);
    free();
    await expect(send(deps, 'k1')).resolves.toMatchObject({ status: 'sent', provider_message_id: 'SM1' });
    await expect(send(deps, 'k1')).resolves.toMatchObject({ replayed: true, provider_message_id: 'SM1' });
    expect(sms.sent).toBe(1);
  });

  it('after the provider answered: the send keeps its answer (it went out) though its record could not be written', async () => {
    sms.afterSend = fill;
    const result = await send(deps, 'k2');
    expect(result).toMatchObject({ status: 'sent', provider_message_id: 'SM1' });
    expect(sms.sent).toBe(1);
    free();
    // The duplicate does not send again, whatever the store kept (short budget: it may wait for the claim).
    const short = { ...deps, config: { ...deps.config, sendBudgetMs: 300 } };
    const again = await send(short, 'k2').then(
      (r) => r.replayed,
      (e: NotifyError) => e.code,
    );
    expect([true, 'IDEMPOTENCY_IN_PROGRESS']).toContain(again);
    expect(sms.sent).toBe(1);
    // A call without a key writes only its record, after the provider: it goes out, and says so.
    sms.afterSend = undefined;
    await fill();
    await expect(send(deps)).resolves.toMatchObject({ status: 'sent', provider_message_id: 'SM2' });
  });

  it('a tool whose store call fails answers STORE_UNAVAILABLE, not INTERNAL_ERROR', async () => {
    await fill();
    const fault = await store.addOptOut('sms', '+14155550199', Date.now()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(fault).toBeInstanceOf(StoreUnavailableError);
    const result = failureResult(fault, silentLogger, 'show_banner');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'STORE_UNAVAILABLE', retry_after_s: 2 } });
  });
});

describe('a scheduling the store did not confirm', () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-unconfirmed-'));
    store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The store, its scheduleSend failing as a cut connection does: before the write, or after its commit (the acknowledgement lost). */
  function cut(when: 'before' | 'after'): SqliteStore {
    return new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'scheduleSend') return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<Store['scheduleSend']>) => {
          if (when === 'after') await target.scheduleSend(...args);
          throw new StoreUnavailableError('postgres', 'Connection terminated unexpectedly');
        };
      },
    });
  }

  for (const when of ['before', 'after'] as const) {
    it(`cut ${when} the commit: STORE_UNAVAILABLE names the id, and reading it tells whether it stands`, async () => {
      const sms = new CountingSms();
      const deps = await pipeline(cut(when), sms);
      const sendAt = new Date(Date.now() + 60_000).toISOString();
      const err = await failure(sendNotification(deps, 'sms', { ...text(), send_at: sendAt }, { client: 'bot' }));
      expect(err.code).toBe('STORE_UNAVAILABLE');
      const id = err.details.notificationId as string;
      expect(id).toMatch(/^ntf_/);
      expect(err.message).toContain(`${id} may or may not be scheduled`);
      expect(err.message).not.toMatch(/nothing was (sent|scheduled)/i);
      expect((await store.getOutboxEntry(id))?.state).toBe(when === 'after' ? 'scheduled' : undefined);
      expect(sms.sent).toBe(0);
    });
  }
});

describe('SQLite locked by another process', () => {
  let dir: string;
  let store: SqliteStore;
  let other: Database.Database;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-busy-'));
    store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger, busyTimeoutMs: 2_000 });
    // Another writer on the same file (as another process would be), holding the write lock.
    other = new Database(join(dir, 'notify.db'));
    other.exec('BEGIN IMMEDIATE');
  });
  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits for the lock on timers, so the event loop keeps turning, and writes once it is free', async () => {
    const order: string[] = [];
    // Released by a timer: a wait that held the event loop would never see it fire, and would end busy.
    setTimeout(() => {
      other.exec('COMMIT');
      order.push('released');
    }, 50);
    await store.addOptOut('sms', '+14155550123', Date.now());
    order.push('written');
    expect(order).toEqual(['released', 'written']);
    expect(await store.findOptedOut({ via: 'sms', recipients: ['+14155550123'] })).toBe('+14155550123');
    // What SQLite itself may wait inside one call, holding the loop: the rest is waited on timers.
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(SYNC_BUSY_MS);
  });

  it('busy past its timeout: StoreUnavailableError', async () => {
    const err = await store.addOptOut('sms', '+14155550123', Date.now()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as StoreUnavailableError).reason).toMatch(/^SQLITE_BUSY/);
  });
});

const unavailable = await postgresSkipReason('store-faults');

describe.skipIf(unavailable !== null)('PostgreSQL cut by a TCP proxy', () => {
  const schema = `notify_faults_${randomBytes(6).toString('hex')}`;
  let proxy: TcpProxy;
  let store: PostgresStore;
  let sms: CountingSms;
  let deps: PipelineDeps;

  beforeAll(async () => {
    const target = new URL(PG_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    store = await openPostgresStore({ connectionString: target.toString(), schema, log: silentLogger, max: 4 });
    sms = new CountingSms();
    deps = await pipeline(store, sms);
  });
  afterAll(async () => {
    await store?.close().catch(() => {});
    await proxy?.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('a cut answers STORE_UNAVAILABLE and sends nothing; the pool reconnects and the same key sends once', async () => {
    await expect(send(deps, 'warm')).resolves.toMatchObject({ status: 'sent' });
    expect(sms.sent).toBe(1);
    // Cut every connection (idle ones included) and refuse new ones for a while.
    proxy.cut(1_500);
    for (const key of [undefined, 'k1']) {
      const err = await failure(send(deps, key));
      expect(err.code).toBe('STORE_UNAVAILABLE');
      expect(err.details.retryAfterS).toBeGreaterThanOrEqual(1);
    }
    expect(sms.sent).toBe(1);
    await new Promise((r) => setTimeout(r, 1_600));
    await expect(send(deps, 'k1')).resolves.toMatchObject({ status: 'sent', provider_message_id: 'SM2' });
    await expect(send(deps, 'k1')).resolves.toMatchObject({ replayed: true, provider_message_id: 'SM2' });
    expect(sms.sent).toBe(2);
  });

  it('GET /banners answers 503 STORE_UNAVAILABLE with Retry-After while the database is cut, and 200 once it is back', async () => {
    const config = loadConfig({ NOTIFY_DATA_DIR: '/unused' });
    const app = await createApp(config, silentLogger, { store });
    const http = await serveHttp(app, { port: 0 });
    try {
      // A new audience each time: the feed's cache is checked against the store on every request anyway.
      expect((await fetch(`${http.url}/banners?audience=a1`)).status).toBe(200);
      proxy.cut(1_000);
      const down = await fetch(`${http.url}/banners?audience=a2`);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('2');
      expect(await down.json()).toMatchObject({ error: { code: 'STORE_UNAVAILABLE', retry_after_s: 2 } });
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await fetch(`${http.url}/banners?audience=a3`)).status).toBe(200);
    } finally {
      await http.close();
    }
  });

  it('a cut while the provider call is under way: the send keeps its answer, and the store serves again after', async () => {
    sms.afterSend = () => proxy.cut(500);
    const result = await send(deps, 'k3');
    sms.afterSend = undefined;
    expect(result).toMatchObject({ status: 'sent', provider_message_id: 'SM3' });
    await new Promise((r) => setTimeout(r, 600));
    await expect(send(deps)).resolves.toMatchObject({ status: 'sent' });
    expect(sms.sent).toBe(4);
  });
});
