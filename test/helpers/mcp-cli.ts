/**
 * The built CLI as an MCP server for e2e suites: connect the SDK's Client to it over stdio,
 * read tool results, and read its delivery log with `notify-mcp outbox`.
 */
import { existsSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ChildStdioTransport, CLI, runCli } from './cli.js';

/** Fails early, with what to do, when the suite runs before a build. */
export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the e2e suites`);
}

export interface CliSession {
  client: Client;
  transport: ChildStdioTransport;
  close(): Promise<void>;
}

/** The two protocol eras a client can speak: 2025-11-25 (`initialize`) and 2026-07-28. */
export type Era = 'legacy' | 'modern';
export const ERAS: readonly Era[] = ['legacy', 'modern'];
export const MODERN_VERSION = '2026-07-28';

/** A v2 SDK client of that era: the default handshake, or pinned to 2026-07-28 (no fallback). */
export function eraClient(name: string, era: Era): Client {
  return new Client({ name, version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {});
}

/** A client of that era connected over streamable HTTP to `url`, with `token` as its bearer. */
export async function connectHttp(url: string, name: string, era: Era, token: string): Promise<Client> {
  const client = eraClient(name, era);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

export async function connectCli(env: Record<string, string>, clientName = 'e2e', era: Era = 'legacy'): Promise<CliSession> {
  assertBuilt();
  const transport = new ChildStdioTransport([], env);
  const client = eraClient(clientName, era);
  try {
    await client.connect(transport);
  } catch (err) {
    await transport.close().catch(() => {});
    throw new Error(`the CLI did not start: ${(err as Error).message}\n${transport.stderr}`);
  }
  return { client, transport, close: () => transport.close() };
}

export interface ToolOutcome {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

/** `structuredContent.error` of a failed call, or a readable failure if the call succeeded. */
export function errorOf(result: ToolOutcome): { code: string; message: string; via?: string } {
  if (!result.isError) throw new Error(`expected an error result, got ${JSON.stringify(result.structuredContent)}`);
  return (result.structuredContent as { error: { code: string; message: string; via?: string } }).error;
}

export interface OutboxRecord {
  id: string;
  via: string;
  status: string;
  provider: string;
  provider_message_id: string | null;
  provider_conversation?: string | null;
  error_code: string | null;
  attempts: number;
  latency_ms: number;
  client: string | null;
  payload: unknown;
  approval?: { outcome: string; reasons: string[]; payload_sha256: string } | null;
}

/** `notify-mcp outbox` with the same environment (and so the same data dir). */
export async function readOutbox(env: Record<string, string>, limit = 100): Promise<OutboxRecord[]> {
  const { code, stdout, stderr } = await runCli(['outbox', '--limit', String(limit)], env);
  if (code !== 0) throw new Error(`notify-mcp outbox exited ${code}: ${stderr}`);
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as OutboxRecord);
}

/** Raw newline-delimited JSON-RPC over the CLI's stdio, answers matched by id: for lines no SDK client would send. */
export async function rawStdio(transport: ChildStdioTransport) {
  const waiting = new Map<number, (m: Record<string, any>) => void>();
  transport.onmessage = (m) => {
    const id = (m as { id?: number }).id;
    if (id !== undefined) waiting.get(id)?.(m as Record<string, any>);
  };
  await transport.start();
  let next = 1;
  return {
    request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
      const id = next++;
      const answer = new Promise<Record<string, any>>((resolve) => waiting.set(id, resolve));
      void transport.send({ jsonrpc: '2.0', id, method, params });
      return answer;
    },
  };
}
