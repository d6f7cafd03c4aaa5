/**
 * mcp-remote, the stdio-to-HTTP bridge that desktop hosts use for remote servers: an SDK
 * client over stdio to mcp-remote, which renames it `"<name> (via mcp-remote 0.15.1)"` on its
 * way to `notify-mcp --http`. The client names itself after the profile it wants, and the
 * server's NOTIFY_CLIENT_PROFILES must still find it through the rename (the plain /mcp
 * endpoint, so the name is all that picks the profile).
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped } from './lib.mjs';

const PROXY = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js');

/** Whether the list has the shape of `profile`. */
function shapeOf(profile, tools) {
  const send = tools.find((t) => t.name === 'send_notification');
  if (profile === 'per-channel') return tools.some((t) => t.name === 'send_sms');
  if (profile === 'nested') return Boolean(send?.inputSchema.properties?.notification);
  if (profile === 'oneOf') return Array.isArray(send?.inputSchema.oneOf);
  return Array.isArray(send?.inputSchema.properties?.via?.enum);
}

export async function runMcpRemote({ profile, url }) {
  if (!url) throw new Error('mcp-remote bridges to HTTP only');
  const endpoint = url.replace(/\/mcp\/[^/]+$/, '/mcp');
  const client = new Client({ name: `compat-${profile}`, version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [PROXY, endpoint, '--transport', 'http-only'], stderr: 'ignore' }),
  );
  try {
    const { tools } = await client.listTools();
    const byName = shapeOf(profile, tools);
    let valid = 0;
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(profile, call);
      const r = await client.callTool({ name, arguments: args });
      if (!r.isError && r.structuredContent?.status === 'dry_run') valid += 1;
    }
    const bad = shaped(profile, BAD_CALL);
    const b = await client.callTool({ name: bad.name, arguments: bad.args });
    return {
      accepted: tools.length > 0 && byName,
      rulesKept: rulesKept(tools.filter((t) => t.name.startsWith('send_')).map((t) => t.inputSchema)),
      valid: `${valid}/3`,
      errorIntact: b.isError === true && b.structuredContent?.error?.code === 'FIELD_NOT_ON_CHANNEL',
      note: byName
        ? `profile chosen by the client's name through the rename (\`compat-${profile} (via mcp-remote …)\`)`
        : 'the profile by name was lost in the rename',
    };
  } finally {
    await client.close();
  }
}
