/**
 * The MCP TypeScript SDK's v1 client (@modelcontextprotocol/sdk), the one that the Anthropic
 * SDK's and @google/genai's MCP helpers are documented with: they take a connected Client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { stdioServer } from './lib.mjs';

export async function connectSdkClient({ profile, url }, name) {
  const client = new Client({ name, version: '1' });
  await client.connect(
    url ? new StreamableHTTPClientTransport(new URL(url)) : new StdioClientTransport({ ...stdioServer(profile), stderr: 'ignore' }),
  );
  return client;
}
