/**
 * A running escalation on the console over real HTTP: the first send's page lists each step
 * (link, channel, due, state) with a Stop button; Stop cancels the steps still waiting (the
 * audit names the operator), and the page then says no step waits, without the button.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { HttpHandle } from '../../src/transports/http/listener.js';
import { BOT, OPS, startConsoleApp, type ConsoleApp } from '../helpers/console-app.js';
import { raw } from '../helpers/http.js';

describe('console: a running escalation', () => {
  let c: ConsoleApp;
  let app: App;
  let http: HttpHandle;
  let agent: Client;

  beforeAll(async () => {
    c = await startConsoleApp('notify-console-escalation', {
      NOTIFY_PUBLIC_URL: 'https://notify.example.com',
      NOTIFY_ESCALATIONS: 'oncall=sms:+14155550100@1h,email:lead@example.com@2h',
    });
    ({ app, http, agent } = c);
  });
  afterAll(async () => c?.close());

  it("shows the steps on the first send's page, and Stop cancels those still waiting", async () => {
    const result = await agent.callTool({
      name: 'send_notification',
      arguments: { via: 'slack', channel: 'C0123ABCD', text: 'db-1 disk full', escalate: 'oncall' },
    });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    const { id } = result.structuredContent as { id: string };
    const steps = await app.store.escalationSteps(id);
    const auth = { Authorization: `Bearer ${OPS}` };
    const shown = await raw(`${http.url}/console/notifications/${id}`, { headers: auth });
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('<h2 id="escalation">Escalation</h2>');
    for (const s of steps) expect(shown.body).toContain(`<a href="/console/notifications/${s.id}">${s.id}</a>`);
    expect(shown.body.match(/<span class="status scheduled">scheduled<\/span>/g)).toHaveLength(2);
    expect(shown.body).toMatch(new RegExp(`action="/console/notifications/${id}/stop"[\\s\\S]*?>Stop</button>`));

    const stop = () =>
      raw(`${http.url}/console/notifications/${id}/stop`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: '',
      });
    const stopped = await stop();
    expect(stopped.status).toBe(303);
    expect(decodeURIComponent(stopped.headers.location as string)).toContain('Stopped: 2 step(s) will not be sent.');
    expect((await app.store.escalationSteps(id)).map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
    expect((await app.store.auditFor(steps[0]!.id)).filter((e) => e.kind === 'outbox.cancelled')).toMatchObject([
      { client: 'ops', tool: null },
    ]);
    expect(decodeURIComponent((await stop()).headers.location as string)).toContain('No step was waiting any more.');
    const after = await raw(`${http.url}/console/notifications/${id}`, { headers: auth });
    expect(after.body).toContain('No step waits any more.');
    expect(after.body).not.toContain('/stop"');
    // Not an operator: no console.
    expect(
      (await raw(`${http.url}/console/notifications/${id}/stop`, { method: 'POST', headers: { Authorization: `Bearer ${BOT}` } })).status,
    ).toBe(403);
  });
});
