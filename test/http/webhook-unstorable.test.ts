/**
 * Text a store cannot keep (U+0000, lone surrogates) in a provider callback: refused with a
 * coded 400 before the store is touched, on SQLite and PostgreSQL alike, never a 500 or a
 * stack in the log. NUL comes as `%00` in a form field (its name or its value); a lone
 * surrogate cannot come through form encoding (it decodes to U+FFFD) but can through JSON
 * escapes inside a field, as Slack's `payload` carries JSON: a test channel reads one so.
 * The feed's query inputs (audience, last_event_id) are tried on both stores too.
 */
import twilio from 'twilio';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { defineChannel, type Channel } from '../../src/channels/channel.js';
import { CHANNELS } from '../../src/channels/registry.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { pager } from '../fixtures/channels/pager/index.js';
import { tempDataDir } from '../helpers/cli.js';
import { raw } from '../helpers/http.js';
import { postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const SID = 'AC' + '3'.repeat(32);
const TWILIO_TOKEN = 'webhook-unstorable-auth-token';
const PUBLIC_URL = 'https://notify.example.com';
const CALLBACK_URL = `${PUBLIC_URL}/webhooks/twilio`;

/** A channel whose receipts carry JSON in a form field, as Slack's interactivity `payload` does. */
const jsonHook: Channel = defineChannel({
  ...pager,
  receipts: {
    path: 'json-hook',
    async read(_settings, cb) {
      const payload = JSON.parse(new URLSearchParams(cb.body).get('payload') ?? '{}') as { id?: string; status?: string };
      if (!payload.id) return { verified: true, report: null };
      return {
        verified: true,
        report: { providerMessageId: payload.id, event: 'delivered', providerStatus: payload.status ?? 'delivered', code: null },
      };
    },
  },
});

interface Served {
  http: HttpHandle;
  /** Store methods called, in order, since the last reset. */
  calls: string[];
  logs: string[];
  close(): Promise<void>;
}

/** The real store, with every method call noted (the store itself answers). */
function noting(store: Store, calls: string[]): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

async function serve(env: Record<string, string>): Promise<Served> {
  const logs: string[] = [];
  const log = createLogger('debug', (line) => void logs.push(line));
  const config = loadConfig(
    {
      ...env,
      NOTIFY_PUBLIC_URL: PUBLIC_URL,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: '+14155550111',
      NOTIFY_SMS_ALLOW: '+1415',
    },
    [...CHANNELS, jsonHook],
  );
  const calls: string[] = [];
  const store = noting(await openStore(config, log), calls);
  // Without the release loop, whose background passes would read the store between the calls noted here.
  const app: App = await createApp(config, log, { store, noOutboxRunner: true });
  const http = await serveHttp(app, { port: 0, stream: { pollMs: 50 } }, log);
  return {
    http,
    calls,
    logs,
    async close() {
      await http.close();
      await app.close();
    },
  };
}

/** Posts `body` (form-encoded text as given) to /webhooks/twilio, signed as Twilio signs `params`. */
function twilioCallback(s: Served, params: Record<string, string>) {
  const body = new URLSearchParams(params).toString();
  const signature = twilio.getExpectedTwilioSignature(TWILIO_TOKEN, CALLBACK_URL, params);
  return raw(`${s.http.url}/webhooks/twilio`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body,
  });
}

const receipt = (extra: Record<string, string> = {}) => ({
  AccountSid: SID,
  MessageSid: 'SM' + '4'.repeat(32),
  MessageStatus: 'delivered',
  To: '+14155550123',
  From: '+14155550111',
  ApiVersion: '2010-04-01',
  ...extra,
});

const stacks = (s: Served) => s.logs.filter((l) => /http request failed|"stack"|\\n {4}at /.test(l));

const STORES: { name: string; env(): Promise<{ env: Record<string, string>; close(): Promise<void> }> }[] = [
  { name: 'SQLite', env: async () => ({ env: { NOTIFY_DATA_DIR: tempDataDir('notify-webhook-nul-') }, close: async () => {} }) },
  {
    name: 'PostgreSQL',
    env: async () => {
      const schema = await sharedPostgresSchema('webhook_nul');
      return { env: { ...schema.env, NOTIFY_DATA_DIR: tempDataDir('notify-webhook-nul-pg-') }, close: () => schema.close() };
    },
  },
];

const pgSkip = await postgresSkipReason('webhook-unstorable');

describe.each(STORES)('text a store cannot keep, over HTTP ($name)', ({ name, env }) => {
  let s: Served;
  let closeEnv: () => Promise<void>;
  const skip = name === 'PostgreSQL' && pgSkip !== null;

  beforeAll(async () => {
    if (skip) return;
    const made = await env();
    closeEnv = made.close;
    s = await serve(made.env);
  });
  beforeEach(() => {
    if (s) s.logs.length = 0;
  });
  afterAll(async () => {
    if (skip) return;
    await s?.close();
    await closeEnv?.();
  });

  it.skipIf(skip)(
    'a signed Twilio callback with U+0000 in a field value or name is a 400 INVALID_FIELD, and the store is not touched',
    async () => {
      const cases: Record<string, string>[] = [
        receipt({ MessageSid: 'SM\u0000' + '4'.repeat(30) }),
        receipt({ ErrorCode: '30003\u0000' }),
        receipt({ 'Extra\u0000Field': 'x' }),
      ];
      for (const params of cases) {
        s.calls.length = 0;
        const answer = await twilioCallback(s, params);
        expect(answer.status).toBe(400);
        const error = (JSON.parse(answer.body) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe('INVALID_FIELD');
        expect(error.message).toMatch(/U\+0000/);
        expect(s.calls).toEqual([]);
      }
      // The same callback without it is read and held (no such send yet): the route works.
      const held = await twilioCallback(s, receipt({ ErrorCode: '30003' }));
      expect(held.status).toBe(200);
      expect(JSON.parse(held.body)).toMatchObject({ ok: true, outcome: 'held' });
      expect(stacks(s)).toEqual([]);
    },
  );

  it.skipIf(skip)('an unsigned callback with U+0000 is refused the same way, before its signature is looked at', async () => {
    s.calls.length = 0;
    const answer = await raw(`${s.http.url}/webhooks/twilio`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'MessageSid=SM%00&MessageStatus=delivered',
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe('INVALID_FIELD');
    expect(s.calls).toEqual([]);
  });

  it.skipIf(skip)(
    'a lone surrogate or U+0000 through JSON escapes inside a field (a Slack-like payload) is a 400 INVALID_FIELD, the store untouched',
    async () => {
      for (const id of ['\\ud800abc', 'abc\\udc00', 'x\\u0000y']) {
        s.calls.length = 0;
        const body = new URLSearchParams({ payload: `{"id":"${id}","status":"delivered"}` }).toString();
        const answer = await raw(`${s.http.url}/webhooks/json-hook`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
        expect(answer.status).toBe(400);
        const error = JSON.parse(answer.body).error as { code: string; message: string };
        expect(error.code).toBe('INVALID_FIELD');
        expect(error.message).toMatch(/U\+0000|lone surrogate/);
        expect(s.calls).toEqual([]);
      }
      // A payload without either reaches the store (no such message: nothing to hold it for).
      const body = new URLSearchParams({ payload: '{"id":"m-1","status":"delivered"}' }).toString();
      const answer = await raw(`${s.http.url}/webhooks/json-hook`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(answer.status).toBe(200);
      expect(stacks(s)).toEqual([]);
    },
  );

  it.skipIf(skip)(
    'audience and last_event_id with U+0000 or an encoded lone surrogate: a coded 400 or a plain snapshot, never a 500',
    async () => {
      for (const path of ['/banners', '/banners/stream']) {
        for (const audience of ['all%00', '%00', 'all,te%00am', '%ED%A0%80']) {
          s.calls.length = 0;
          const answer = await raw(`${s.http.url}${path}?audience=${audience}`);
          expect(answer.status).toBe(400);
          expect(JSON.parse(answer.body).error.code).toBe('INVALID_FIELD');
          expect(s.calls).toEqual([]);
        }
      }
      // A resume cursor the hub never issued (NUL, a lone surrogate) gets the snapshot.
      for (const cursor of ['%00', 'abc-1-%00', '%ED%A0%80']) {
        const { openSse } = await import('../helpers/sse.js');
        const reader = await openSse(`${s.http.url}/banners/stream?audience=all&last_event_id=${cursor}`);
        try {
          expect((await reader.nth(0)).event).toBe('snapshot');
        } finally {
          reader.close();
        }
      }
      expect(stacks(s)).toEqual([]);
    },
  );
});
