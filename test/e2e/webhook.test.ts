/**
 * Issue 38 end to end: the webhook channel over MCP (HTTP, an SDK client that validates every
 * result against the output schema), posting to local receivers that check what each real
 * service checks (test/fixtures/webhook/receivers.ts); bad input refused with a structured
 * error while nothing leaves; the dry-run record holding the exact request, secrets redacted.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { digestOf } from '../../src/store/audit.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import {
  checkDiscord,
  checkGoogleChat,
  checkNtfy,
  checkTeams,
  decode2047,
  startReceivers,
  verifyStandard,
} from '../fixtures/webhook/receivers.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NTFY_TOKEN = 'tk_0123456789abcdef';

type Receivers = Awaited<ReturnType<typeof startReceivers>>;
type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };

function env(port: number, closedPort: number, extra: Record<string, string> = {}) {
  const at = (path: string) => `http://127.0.0.1:${port}/${path}`;
  return {
    NOTIFY_DATA_DIR: mkdtempSync(join(tmpdir(), 'notify-webhook-')),
    NOTIFY_WEBHOOKS: [
      `alerts=standard:${at('standard')}`,
      `team=teams:${at('teams')}`,
      `dev=discord:${at('discord')}`,
      `chat=google-chat:${at('google-chat')}`,
      `phone=ntfy:${at('ntfy')}`,
      // Not on the private hosts: it resolves to loopback.
      `inside=standard:https://localhost:${port}/standard`,
      `hop=discord:${at('redirect')}`,
      // Refuses at connect, then falls back to dev.
      `down=ntfy:http://127.0.0.1:${closedPort}/ntfy|dev`,
    ].join(','),
    NOTIFY_WEBHOOK_SECRET_ALERTS: SECRET,
    NOTIFY_WEBHOOK_SECRET_INSIDE: SECRET,
    NOTIFY_WEBHOOK_SECRET_PHONE: NTFY_TOKEN,
    NOTIFY_WEBHOOK_PRIVATE_HOSTS: '127.0.0.1',
    NOTIFY_WEBHOOK_ALLOW: '*',
    ...extra,
  };
}

describe('webhook channel, live against local receivers', () => {
  let receivers: Receivers;
  let app: App;
  let http: HttpHandle;
  let client: Client;

  beforeAll(async () => {
    receivers = await startReceivers(
      {
        standard: verifyStandard(SECRET),
        teams: checkTeams,
        discord: checkDiscord,
        'google-chat': checkGoogleChat,
        ntfy: checkNtfy(NTFY_TOKEN),
      },
      () => `http://127.0.0.1:${receivers.port}/standard`,
    );
    const closed = await startReceivers({});
    await closed.close();
    app = await createApp(loadConfig(env(receivers.port, closed.port, { NOTIFY_SEND_BUDGET_MS: '3000' })), silentLogger);
    http = await serveHttp(app, { port: 0 });
    client = new Client({ name: 'webhook-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp/flat`)));
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await http?.close();
    await app?.close();
    await receivers?.close();
  });

  const send = async (args: Record<string, unknown>): Promise<Result> =>
    (await client.callTool({ name: 'send_notification', arguments: { via: 'webhook', ...args } })) as Result;
  const last = () => receivers.received.at(-1)!;

  async function sent(args: Record<string, unknown>) {
    const before = receivers.received.length;
    const result = await send(args);
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ via: 'webhook', status: 'sent', provider: 'webhook' });
    expect(receivers.received.length).toBe(before + 1);
    expect(last().refused).toBeUndefined();
    return { id: result.structuredContent!.id as string, req: last() };
  }

  it('lists webhook with its targets in the flat schema', async () => {
    const tool = (await client.listTools()).tools.find((t) => t.name === 'send_notification')!;
    const props = tool.inputSchema.properties as Record<string, { enum?: string[] }>;
    expect(props.via!.enum).toContain('webhook');
    expect(props.target!.enum).toEqual(['alerts', 'team', 'dev', 'chat', 'phone', 'inside', 'hop', 'down']);
    expect(JSON.stringify(tool.inputSchema)).not.toContain('127.0.0.1');
  });

  it('standard: signed as Standard Webhooks specifies, webhook-id the notification id', async () => {
    const { id, req } = await sent({ target: 'alerts', text: 'Deploy finished', title: 'Deploy', fields: [['env', 'prod']] });
    expect(req.headers['webhook-id']).toBe(id);
    expect(JSON.parse(req.body)).toEqual({
      type: 'notification',
      id,
      title: 'Deploy',
      text: 'Deploy finished',
      fields: [{ name: 'env', value: 'prod' }],
    });
  });

  it('teams: an Adaptive Card the schema accepts, fields as a FactSet', async () => {
    const { req } = await sent({ target: 'team', text: 'db-1 is down', title: 'Incident', fields: [['host', 'db-1']] });
    const card = JSON.parse(req.body).attachments[0].content;
    expect(card.body.map((b: { type: string }) => b.type)).toEqual(['TextBlock', 'TextBlock', 'FactSet']);
  });

  it('discord: content alone, an embed with a title or fields, mentions never ping', async () => {
    const plain = JSON.parse((await sent({ target: 'dev', text: '@everyone deploy done' })).req.body);
    expect(plain).toEqual({ content: '@everyone deploy done', allowed_mentions: { parse: [] } });
    const rich = JSON.parse((await sent({ target: 'dev', text: 'x'.repeat(4000), title: 'T', fields: [['a', 'b']] })).req.body);
    expect(rich.embeds[0]).toMatchObject({ title: 'T', fields: [{ name: 'a', value: 'b' }] });
  });

  it('google-chat: text, or a card with a header and a widget per field', async () => {
    expect(JSON.parse((await sent({ target: 'chat', text: 'hello' })).req.body)).toEqual({ text: 'hello' });
    const card = JSON.parse((await sent({ target: 'chat', text: 'hello', title: 'Hi', fields: [['k', 'v']] })).req.body);
    expect(card.cardsV2[0].card.header).toEqual({ title: 'Hi' });
    expect(card.cardsV2[0].card.sections[0].widgets).toHaveLength(2);
  });

  it('ntfy: the text as the body, title (RFC 2047 when not ASCII), priority and tags as headers, the token as Bearer', async () => {
    const { req } = await sent({ target: 'phone', text: 'Disk full', title: 'Alerte café', fields: [['host', 'db-1']], urgent: true });
    expect(req.body).toBe('Disk full\nhost: db-1');
    expect(decode2047(String(req.headers.title))).toBe('Alerte café');
    expect(req.headers).toMatchObject({ priority: 'high', tags: 'notify-mcp', authorization: `Bearer ${NTFY_TOKEN}` });
  });

  it('falls back to the next target when the first refuses the connection', async () => {
    const { req } = await sent({ target: 'down', text: 'via the fallback' });
    expect(req.path).toBe('/discord');
  });

  it('a fallback is an attempt of its own: get_notification names both targets, the audit has each request digest', async () => {
    const { id } = await sent({ target: 'down', text: 'attempts of a fallback' });
    const got = (await client.callTool({ name: 'get_notification', arguments: { id } })) as Result;
    expect(got.isError).toBeFalsy();
    expect(got.structuredContent!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, endpoint: 'down', outcome: 'transient', vendor_code: 'ECONNREFUSED' }),
      expect.objectContaining({ attempt: 2, endpoint: 'dev', outcome: 'sent' }),
    ]);
    // Each target's own request as recorded (the fallback's is payload.fallback), so a verifier can recompute both.
    const { fallback, ...own } = (await app.store.getDelivery(id))!.payload as Record<string, unknown> & { fallback: unknown };
    const requests = (await app.store.auditFor(id)).filter((e) => e.kind === 'request');
    expect(requests.map((e) => e.digest)).toEqual([digestOf(own), digestOf(fallback)]);
  });

  describe('bad input: a structured error, and nothing leaves', () => {
    const refused = async (args: Record<string, unknown>, code: string, message: RegExp) => {
      const before = receivers.received.length;
      const result = await send(args);
      expect(result.isError).toBe(true);
      const error = (result.structuredContent as { error: { code: string; message: string } }).error;
      expect(error.code, error.message).toBe(code);
      expect(error.message).toMatch(message);
      return receivers.received.length - before;
    };

    it('a URL given by the model, as the target or as a field of its own', async () => {
      expect(await refused({ target: 'https://evil.example/hook', text: 'x' }, 'INVALID_FIELD', /target/)).toBe(0);
      expect(await refused({ target: 'alerts', url: 'https://evil.example/hook', text: 'x' }, 'FIELD_NOT_ON_CHANNEL', /url/)).toBe(0);
    });

    it('an unknown target', async () => {
      expect(await refused({ target: 'nope', text: 'x' }, 'INVALID_FIELD', /alerts/)).toBe(0);
    });

    it("text over a format's limit names the target and the limit", async () => {
      expect(await refused({ target: 'dev', text: 'x'.repeat(2001) }, 'TOO_LONG', /target dev: text takes at most 2000 characters/)).toBe(
        0,
      );
      expect(await refused({ target: 'phone', text: 'é'.repeat(2100) }, 'TOO_LONG', /target phone: .*4096 bytes/)).toBe(0);
      expect(await refused({ target: 'chat', text: 'x'.repeat(4097) }, 'TOO_LONG', /target chat: text takes at most 4096/)).toBe(0);
      expect(await refused({ target: 'team', text: 'x'.repeat(29_000) }, 'TOO_LONG', /target team: .*28672 bytes/)).toBe(0);
      expect(await refused({ target: 'down', text: 'x'.repeat(2001) }, 'TOO_LONG', /target dev \(the fallback of down\)/)).toBe(0);
    });

    it('a target resolving to a private address (localhost, not on NOTIFY_WEBHOOK_PRIVATE_HOSTS)', async () => {
      expect(
        await refused({ target: 'inside', text: 'x' }, 'PROVIDER_REJECTED', /localhost resolved to .*loopback.*nothing was sent/),
      ).toBe(0);
    });

    it('a redirect is not followed: the place it points to receives nothing', async () => {
      const standardBefore = receivers.received.filter((r) => r.path === '/standard').length;
      expect(await refused({ target: 'hop', text: 'x' }, 'PROVIDER_REJECTED', /HTTP 302, a redirect.*not followed/)).toBe(1);
      expect(receivers.received.filter((r) => r.path === '/standard').length).toBe(standardBefore);
    });

    it('fields beyond 20 pairs, or not pairs', async () => {
      const many = Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']);
      expect(await refused({ target: 'alerts', text: 'x', fields: many }, 'TOO_LONG', /20 pairs/)).toBe(0);
      expect(await refused({ target: 'alerts', text: 'x', fields: [['only-a-name']] }, 'INVALID_FIELD', /\[name, value\] pair/)).toBe(0);
    });
  });
});

describe('webhook configuration', () => {
  const base = { NOTIFY_DATA_DIR: '/nonexistent', NOTIFY_WEBHOOK_ALLOW: '*' };

  it('refuses at start a standard secret that is not whsec_-shaped, or missing', () => {
    const load = (extra: Record<string, string>) => () =>
      loadConfig({ ...base, NOTIFY_WEBHOOKS: 'alerts=standard:https://hooks.example.com/n', ...extra });
    expect(load({ NOTIFY_WEBHOOK_SECRET_ALERTS: 'hunter2' })).toThrow(ConfigError);
    expect(load({ NOTIFY_WEBHOOK_SECRET_ALERTS: 'hunter2' })).toThrow(
      /NOTIFY_WEBHOOK_SECRET_ALERTS is not a Standard Webhooks secret: it must read whsec_/,
    );
    expect(load({ NOTIFY_WEBHOOK_SECRET_ALERTS: 'whsec_c2hvcnQ=' })).toThrow(/decodes to 5 bytes; a whsec_ secret holds 24 to 64/);
    expect(load({})).toThrow(/set NOTIFY_WEBHOOK_SECRET_ALERTS to its signing secret/);
  });

  it('refuses URLs that are not https, carry credentials or point at a private address; and unknown fallbacks', () => {
    const load = (hooks: string) => () => loadConfig({ ...base, NOTIFY_WEBHOOKS: hooks });
    expect(load('dev=discord:http://hooks.example.com/x')).toThrow(/must be https/);
    expect(load('dev=discord:https://u:p@hooks.example.com/x')).toThrow(/carries credentials/);
    expect(load('dev=discord:https://10.0.0.5/x')).toThrow(/10\.0\.0\.5, a private address; list it on NOTIFY_WEBHOOK_PRIVATE_HOSTS/);
    expect(load('dev=discord:https://hooks.example.com/x|nope')).toThrow(/falls back to "nope", which is not a target/);
    expect(load('dev=fax:https://hooks.example.com/x')).toThrow(/use one of standard, teams, discord, google-chat, ntfy/);
  });

  it('is absent from every profile without a target', () => {
    const config = loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' });
    expect(config.channels.map((c) => c.name)).not.toContain('webhook');
  });
});

describe('webhook dry run', () => {
  it('records the exact request: the URL origin only, the signature and token redacted, nothing sent', async () => {
    const receivers = await startReceivers({ standard: verifyStandard(SECRET) });
    const app = await createApp(loadConfig(env(receivers.port, 1, { NOTIFY_WEBHOOK_DRY_RUN: '1' })), silentLogger);
    const http = await serveHttp(app, { port: 0 });
    const client = new Client({ name: 'webhook-dry', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp/flat`)));
      const call = async (args: Record<string, unknown>) => {
        const result = (await client.callTool({ name: 'send_notification', arguments: { via: 'webhook', ...args } })) as Result;
        expect(result.structuredContent).toMatchObject({ status: 'dry_run', provider: 'dry-run' });
        return (await app.store.getDelivery(result.structuredContent!.id as string))!;
      };
      const record = await call({ target: 'alerts', text: 'hi', title: 'T' });
      expect(record.payload).toEqual({
        target: 'alerts',
        format: 'standard',
        method: 'POST',
        url: `http://127.0.0.1:${receivers.port}/…`,
        headers: {
          'content-type': 'application/json',
          'webhook-id': record.id,
          'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
          'webhook-signature': 'v1,<redacted>',
        },
        body: JSON.stringify({ type: 'notification', id: record.id, title: 'T', text: 'hi', fields: [] }),
      });
      const ntfy = await call({ target: 'phone', text: 'hi' });
      expect((ntfy.payload as { headers: Record<string, string> }).headers.Authorization).toBe('Bearer <redacted>');
      const chain = await call({ target: 'down', text: 'hi' });
      expect(chain.payload).toMatchObject({
        target: 'down',
        fallback: { target: 'dev', format: 'discord', url: `http://127.0.0.1:${receivers.port}/…` },
      });
      const stored = JSON.stringify([record, ntfy, chain]);
      expect(stored).not.toContain(SECRET.slice('whsec_'.length));
      expect(stored).not.toContain(NTFY_TOKEN);
      expect(stored).not.toContain('/standard');
      expect(receivers.received).toHaveLength(0);
    } finally {
      await client.close().catch(() => {});
      await http.close();
      await app.close();
      await receivers.close();
    }
  });
});
