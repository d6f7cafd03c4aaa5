/**
 * createServer(app, connection): the MCP server for one connection, on the SDK's low-level
 * Server (registerTool would publish an empty schema for a union). The profile is chosen
 * per request from the connection's inputs and the client's self-reported name.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { App } from './app.js';
import { channelToolName, SEND_TOOL } from './channels/union.js';
import type { Profile } from './config.js';
import type { Logger } from './log.js';
import { selectProfile } from './profile.js';
import { VERSION } from './version.js';

export interface Connection {
  /** Profile bound to the HTTP credential, if any. */
  credentialProfile?: Profile;
  /** Profile named by the HTTP endpoint (`/mcp/<profile>`), if any. */
  endpointProfile?: Profile;
  /** The authenticated client name (HTTP token); overrides clientInfo.name in records. */
  client?: string;
  log?: Logger;
}

/** What a client's model reads first; the send tools are named from the server's channels. */
const instructions = (channels: readonly { name: string }[]) =>
  `Send notifications with ${SEND_TOOL} (or ${channels.map((c) => channelToolName(c.name)).join('/')}): pick the channel with via. ` +
  'Failed calls return structuredContent.error with a code, a JSON Pointer path and a fix. ' +
  'Use show_banner, list_banners and dismiss_banner for in-app banners.';

export function createServer(app: App, conn: Connection = {}): Server {
  const server = new Server(
    { name: 'notify-mcp', title: 'notify-mcp', version: VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: instructions(app.channels) },
  );
  const profileNow = () =>
    selectProfile(app.config, { ...conn, clientName: server.getClientVersion()?.name });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: app.catalog[profileNow()].tools }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const profile = profileNow();
    const entry = app.catalog[profile].entries.get(request.params.name);
    if (!entry) {
      const names = app.catalog[profile].tools.map((t) => t.name).join(', ');
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}". Available tools: ${names}.`);
    }
    const client = conn.client ?? server.getClientVersion()?.name ?? null;
    const log = (conn.log ?? app.log).child({ tool: entry.tool.name, profile, ...(client ? { client } : {}) });
    const token = request.params._meta?.progressToken;
    return app.track(entry.call(request.params.arguments, {
      deps: app,
      store: app.store,
      config: app.config,
      log,
      client,
      now: app.now,
      signal: extra.signal,
      progress:
        token === undefined
          ? undefined
          : (progress, total, message) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress, ...(total === undefined ? {} : { total }), message },
              }),
    }));
  });
  return server;
}
