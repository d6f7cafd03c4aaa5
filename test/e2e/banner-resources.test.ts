/**
 * Active banners as MCP resources through the v2 SDK client, over stdio (the built CLI) and
 * Streamable HTTP, in both protocol eras: the template and the list, reads (the same JSON as
 * GET /banners), an unknown URI, and pushed updates: resources/subscribe on 2025-11-25,
 * subscriptions/listen on 2026-07-28; only for the subscribed segment, and none after
 * unsubscribing.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { ChildStdioTransport, cliEnv, tempDataDir } from '../helpers/cli.js';
import { assertBuilt, ERAS, eraClient, type Era } from '../helpers/mcp-cli.js';

type Setup = { client: Client; feed(audience: string): Promise<string | undefined>; close(): Promise<void> };

async function overStdio(era: Era): Promise<Setup> {
  assertBuilt();
  const transport = new ChildStdioTransport([], cliEnv({ NOTIFY_DATA_DIR: tempDataDir() }));
  const client = eraClient('resources-e2e', era);
  await client.connect(transport);
  return { client, feed: async () => undefined, close: () => transport.close() };
}

let app: App;
let http: HttpHandle;
beforeAll(async () => {
  app = await createApp(loadConfig({ NOTIFY_DATA_DIR: tempDataDir() }), silentLogger);
  http = await serveHttp(app, { port: 0, stream: { pollMs: 100 } });
});
afterAll(async () => {
  await http.close();
  await app.close();
});

async function overHttp(era: Era): Promise<Setup> {
  const client = eraClient('resources-e2e', era);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
  return {
    client,
    feed: async (audience) => (await fetch(`${http.url}/banners?audience=${audience}`)).text(),
    close: () => client.close(),
  };
}

const TRANSPORTS = { stdio: overStdio, http: overHttp } as const;

const show = async (client: Client, text: string, audience: string) =>
  ((await client.callTool({ name: 'show_banner', arguments: { text, audience } })).structuredContent as { banner_id: string }).banner_id;

describe.each(Object.keys(TRANSPORTS) as (keyof typeof TRANSPORTS)[])('banner resources over %s', (transport) => {
  describe.each(ERAS)('%s client', (era) => {
    let setup: Setup;
    beforeAll(async () => {
      setup = await TRANSPORTS[transport](era);
    });
    afterAll(() => setup.close());

    it('lists the template and the segments with active banners, and reads them as GET /banners does', async () => {
      const { client } = setup;
      const segment = `ops-${transport}-${era}`;
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates).toEqual([
        expect.objectContaining({ uriTemplate: 'banners://active/{audience}', mimeType: 'application/json' }),
      ]);
      const id = await show(client, 'Payments degraded', segment);
      const uri = `banners://active/${segment}`;
      const { resources } = await client.listResources();
      expect(resources).toContainEqual(expect.objectContaining({ uri, mimeType: 'application/json' }));
      const read = await client.readResource({ uri });
      expect(read.contents).toHaveLength(1);
      const text = (read.contents[0] as { text: string }).text;
      expect(JSON.parse(text)).toMatchObject({ audience: [segment], banners: [{ banner_id: id, text: 'Payments degraded' }] });
      const feed = await setup.feed(segment);
      if (feed !== undefined) expect(text).toBe(feed);

      await expect(client.readResource({ uri: 'banners://active/Not Valid' })).rejects.toThrow(/banners:\/\/active\/\{audience\}/);
      await expect(client.readResource({ uri: 'file:///etc/passwd' })).rejects.toThrow(/No resource "file:\/\/\/etc\/passwd"/);
    });

    it('pushes notifications/resources/updated for a subscribed segment, and stops after unsubscribing', async () => {
      const { client } = setup;
      const segment = `watch-${transport}-${era}`;
      const uri = `banners://active/${segment}`;
      const updated: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));

      let stop: () => Promise<unknown>;
      if (era === 'legacy') {
        await client.subscribeResource({ uri });
        stop = () => client.unsubscribeResource({ uri });
      } else {
        const sub = await client.listen({ resourceSubscriptions: [uri] });
        expect(sub.honoredFilter.resourceSubscriptions).toEqual([uri]);
        stop = () => sub.close();
      }
      await show(client, 'elsewhere', `other-${transport}-${era}`);
      const id = await show(client, 'Deploy in progress', segment);
      await expect.poll(() => updated.length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
      expect(new Set(updated)).toEqual(new Set([uri]));
      const read = JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text);
      expect(read.banners.map((b: { banner_id: string }) => b.banner_id)).toEqual([id]);

      updated.length = 0;
      await client.callTool({ name: 'dismiss_banner', arguments: { banner_id: id } });
      await expect.poll(() => updated.length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);

      await stop();
      await new Promise((r) => setTimeout(r, 300));
      updated.length = 0;
      await show(client, 'after unsubscribe', segment);
      await new Promise((r) => setTimeout(r, 700));
      expect(updated).toEqual([]);
    });
  });
});
