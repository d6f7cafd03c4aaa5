/**
 * The console's scheduled and held view over real HTTP: a send an agent scheduled (send_at)
 * is listed with its due time and taken back with Retract, by the outbox's own retract, so
 * it is never sent; a second retract says it is no longer waiting.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { raw } from '../helpers/http.js';
import { eraClient } from '../helpers/mcp-cli.js';

const OPS = 'ops-token-0123456789abcdef';
const BOT = 'bot-token-0123456789abcdef';

describe('console: scheduled and held', () => {
  let app: App;
  let http: HttpHandle;
  let agent: Client;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-console-waiting-'));
    app = await createApp(loadConfig({ NOTIFY_DATA_DIR: dir, HOME: dir, NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`, NOTIFY_OPERATOR_CLIENTS: 'ops' }), createLogger('error', () => {}));
    http = await serveHttp(app, { port: 0 });
    agent = eraClient('agent', 'modern');
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${BOT}` } } }));
  });
  afterAll(async () => {
    await agent?.close().catch(() => {});
    await http?.close();
    await app?.close();
  });

  it('lists a scheduled send and retracts it, once', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const result = await agent.callTool({ name: 'send_notification', arguments: { via: 'sms', to: '+14155550123', body: 'Standup in 5', send_at: sendAt } });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    const { id, status } = result.structuredContent as { id: string; status: string };
    expect(status).toBe('scheduled');
    const auth = { Authorization: `Bearer ${OPS}` };
    const list = await raw(`${http.url}/console/waiting`, { headers: auth });
    expect(list.status).toBe(200);
    expect(list.body).toContain('Standup in 5');
    expect(list.body).toMatch(new RegExp(`action="/console/waiting/${id}/retract"[\\s\\S]*?>Retract</button>`));
    expect((await raw(`${http.url}/console/waiting`, { headers: { Authorization: `Bearer ${BOT}` } })).status).toBe(403);
    const post = () =>
      raw(`${http.url}/console/waiting/${id}/retract`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' }, body: '' });
    const retracted = await post();
    expect(retracted.status).toBe(303);
    expect(decodeURIComponent(retracted.headers.location as string)).toContain(`Retracted ${id}: it will not be sent.`);
    expect((await app.store.getOutboxEntry(id))!.state).toBe('cancelled');
    // The audit says who took it back: the operator, not the agent that scheduled it.
    const cancelled = (await app.store.auditFor(id)).filter((e) => e.kind === 'outbox.cancelled');
    expect(cancelled).toMatchObject([{ client: 'ops', tool: null }]);
    expect((await post()).status).toBe(409);
    expect((await raw(`${http.url}/console/waiting`, { headers: auth })).body).toContain('Nothing is scheduled or held.');
  });
});
