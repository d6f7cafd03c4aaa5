/**
 * Cloudflare's `agents` (its MCP client, `agents/mcp/client`): MCPClientManager connects over
 * streamable HTTP with its own MCP client (@modelcontextprotocol/client 2.x, which speaks
 * 2026-07-28), and getAITools() converts each tool for the AI SDK (its input schema through
 * zod's z.fromJSONSchema). generateText hands them to a canned model (as the AI SDK cell does),
 * and each call runs the tool's execute, which throws the server's text when the result is an
 * error. HTTP only: its client has no stdio transport (it runs in a Worker). The manager is a
 * Durable Object capability that keeps its server list in the object's SQLite storage; outside
 * a Worker that storage is stubbed empty here (connect() stores nothing, it only reads).
 */
import { MCPClientManager } from 'agents/mcp/client';
import { turn } from './ai-sdk.mjs';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped } from './lib.mjs';

const textOf = (v) => (v instanceof Error ? v.message : typeof v === 'string' ? v : JSON.stringify(v ?? ''));
/** The validation error's own words, without the value it echoes. */
const reason = (e) =>
  textOf(e)
    .replace(/\s+/g, ' ')
    .replace(/Value: \{.*?\}\.? Error message: /, '');

export async function runCloudflareAgents({ profile, url }) {
  if (!url) throw new Error('no stdio transport in agents');
  const manager = new MCPClientManager('notify-compat', '1');
  Object.defineProperty(manager, 'lifecycle', {
    value: { storage: { sql: { exec: () => [] }, get: async () => undefined, put: async () => {} } },
  });
  try {
    const { id } = await manager.connect(url);
    const all = manager.getAITools();
    const prefix = `tool_${id.replace(/-/g, '')}_`;
    const tools = Object.fromEntries(Object.entries(all).map(([k, t]) => [k.slice(prefix.length), t]));
    const names = Object.keys(tools);
    const accepted = names.includes(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    const notes = [];
    const listed = manager.listTools().map((t) => t.name);
    const skipped = listed.filter((n) => !names.includes(n));
    if (skipped.length) notes.push(`getAITools() skipped ${skipped.join(', ')}`);
    let handed = [];
    let valid = 0;
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(profile, call);
      if (!tools[name]) continue;
      const r = await turn(tools, name, args);
      handed = r.handed ?? handed;
      if (r.output && !r.output.isError && textOf(r.output).includes('dry_run')) valid += 1;
      else if (r.error) notes.push(`valid ${call.via}: ${textOf(r.error).replace(/\s+/g, ' ').slice(0, 100)}`);
    }
    const bad = shaped(profile, BAD_CALL);
    const b = tools[bad.name] ? await turn(tools, bad.name, bad.args) : {};
    const errorIntact =
      textOf(b.output).includes('FIELD_NOT_ON_CHANNEL') || (b.error !== undefined && textOf(b.error).includes('FIELD_NOT_ON_CHANNEL'));
    if (!errorIntact && b.error) notes.push(`the SDK answered itself: ${reason(b.error).slice(0, 160)}`);
    const schemas = (handed ?? []).filter((t) => /^send_/.test(t.name)).map((t) => t.inputSchema);
    const root = schemas.find((s) => s?.type !== 'object');
    if (root)
      notes.push(
        `client at fault: the schema the model gets has no root type "object" (type: ${JSON.stringify(root.type)}, keys ${Object.keys(root).join(',')})`,
      );
    return { accepted, rulesKept: rulesKept(schemas), valid: `${valid}/3`, errorIntact, note: notes.join('; ') };
  } finally {
    await manager.closeAllConnections();
  }
}
