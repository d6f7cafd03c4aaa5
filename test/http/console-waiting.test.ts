/**
 * The console's scheduled and held view over real HTTP: a send an agent scheduled (send_at)
 * is listed with its due time and taken back with Retract, by the outbox's own retract, so
 * it is never sent; a second retract says it is no longer waiting. The notifications list
 * shows scheduled and cancelled sends (the outbox's, with no delivery record) under their
 * filters, paged with the records, and a retracted scheduled send has its page.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { HttpHandle } from '../../src/transports/http/listener.js';
import { BOT, OPS, startConsoleApp, type ConsoleApp } from '../helpers/console-app.js';
import { raw } from '../helpers/http.js';

describe('console: scheduled and held', () => {
  let c: ConsoleApp;
  let app: App;
  let http: HttpHandle;
  let agent: Client;

  beforeAll(async () => {
    c = await startConsoleApp('notify-console-waiting');
    ({ app, http, agent } = c);
  });
  afterAll(async () => c?.close());

  it('lists a scheduled send and retracts it, once', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const result = await agent.callTool({
      name: 'send_notification',
      arguments: { via: 'sms', to: '+14155550123', body: 'Standup in 5', send_at: sendAt },
    });
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
      raw(`${http.url}/console/waiting/${id}/retract`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: '',
      });
    const retracted = await post();
    expect(retracted.status).toBe(303);
    expect(decodeURIComponent(retracted.headers.location as string)).toContain(`Retracted ${id}: it will not be sent.`);
    expect((await app.store.getOutboxEntry(id))!.state).toBe('cancelled');
    // The audit says who took it back: the operator, not the agent that scheduled it.
    const cancelled = (await app.store.auditFor(id)).filter((e) => e.kind === 'outbox.cancelled');
    expect(cancelled).toMatchObject([{ client: 'ops', tool: null }]);
    expect((await post()).status).toBe(409);
    expect((await raw(`${http.url}/console/waiting`, { headers: auth })).body).toContain('Nothing is scheduled or held.');
    // Its page: the call as kept, cancelled, the operator's retract on its audit, no Retract button.
    const shown = await raw(`${http.url}/console/notifications/${id}`, { headers: auth });
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('<span class="status cancelled">cancelled</span>');
    expect(shown.body).toContain('Standup in 5');
    expect(shown.body).toContain('<td data-label="Kind">outbox.cancelled</td><td data-label="Client">ops</td>');
    expect(shown.body).not.toContain('/retract');
    expect((await raw(`${http.url}/console/notifications/ntf_nothing_here`, { headers: auth })).status).toBe(404);
  });

  it('lists scheduled and cancelled sends with the records, under the status filter, paged once each', async () => {
    const auth = { Authorization: `Bearer ${OPS}` };
    const schedule = async (body: string) => {
      const r = await agent.callTool({
        name: 'send_notification',
        arguments: { via: 'sms', to: '+14155550123', body, send_at: new Date(Date.now() + 3_600_000).toISOString() },
      });
      return (r.structuredContent as { id: string }).id;
    };
    const later = await schedule('Later today');
    const gone = await schedule('Never mind');
    expect(
      (
        await raw(`${http.url}/console/waiting/${gone}/retract`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: '',
        })
      ).status,
    ).toBe(303);
    const sent = await agent.callTool({ name: 'send_notification', arguments: { via: 'sms', to: '+14155550123', body: 'Right now' } });
    const now = (sent.structuredContent as { id: string }).id;
    const ids = (body: string) =>
      [...body.matchAll(/<td data-label="Notification" class="id"><a href="\/console\/notifications\/([^"]+)">/g)].map((m) => m[1]!);
    const all = ids((await raw(`${http.url}/console`, { headers: auth })).body);
    expect(all.slice(0, 3)).toEqual([now, gone, later]);
    const scheduled = await raw(`${http.url}/console?status=scheduled`, { headers: auth });
    expect(ids(scheduled.body)).toEqual([later]);
    expect(scheduled.body).toContain('<span class="status scheduled">scheduled</span>');
    expect(ids((await raw(`${http.url}/console?status=cancelled`, { headers: auth })).body)).toContain(gone);
    expect(ids((await raw(`${http.url}/console?status=cancelled`, { headers: auth })).body)).not.toContain(later);
    // Paged after an outbox row and after a record: every row once, in order.
    const walk = async () => {
      const seen: string[] = [];
      for (const after of [undefined, ...all]) {
        const page = ids((await raw(`${http.url}/console${after ? `?after=${after}` : ''}`, { headers: auth })).body);
        if (after !== undefined) expect(page, `after ${after}`).toEqual(all.slice(all.indexOf(after) + 1));
        else seen.push(...page);
      }
      return seen;
    };
    expect(await walk()).toEqual(all);
  });
});
