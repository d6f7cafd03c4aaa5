/**
 * The app served over real HTTP for console tests: an operator (`ops`, in
 * NOTIFY_OPERATOR_CLIENTS) and an agent (`bot`) with bearer tokens, and the agent connected
 * as an MCP client (2026-07-28).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { connectHttp } from './mcp-cli.js';

export const OPS = 'ops-token-0123456789abcdef';
export const BOT = 'bot-token-0123456789abcdef';

export interface ConsoleApp {
  app: App;
  http: HttpHandle;
  agent: Client;
  close(): Promise<void>;
}

/** `env` over a new data directory and the two clients. */
export async function startConsoleApp(prefix: string, env: Record<string, string> = {}): Promise<ConsoleApp> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const app = await createApp(
    loadConfig({ NOTIFY_DATA_DIR: dir, HOME: dir, NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`, NOTIFY_OPERATOR_CLIENTS: 'ops', ...env }),
    createLogger('error', () => {}),
  );
  const http = await serveHttp(app, { port: 0 });
  const agent = await connectHttp(`${http.url}/mcp`, 'agent', 'modern', BOT);
  return {
    app,
    http,
    agent,
    async close() {
      await agent.close().catch(() => {});
      await http.close();
      await app.close();
    },
  };
}
