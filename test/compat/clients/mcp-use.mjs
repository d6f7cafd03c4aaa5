/**
 * mcp-use (1.x, the TypeScript library): MCPClient connects, and LangChainAdapter.createTools
 * turns the server's tools into the LangChain tools that its MCPAgent hands a model: each
 * input schema goes through mcp-use's own JSON Schema → zod conversion. What a chat model is
 * handed is LangChain's conversion of that zod schema (convertToOpenAITool), and each call goes
 * through tool.invoke, which checks the input against the zod schema before the server sees it.
 */
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { MCPClient } from 'mcp-use/client';
import { LangChainAdapter } from 'mcp-use/adapters';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped, stdioServer } from './lib.mjs';

const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

export async function runMcpUse({ profile, url }) {
  const client = MCPClient.fromDict({ mcpServers: { notify: url ? { url } : stdioServer(profile) } });
  try {
    await client.createAllSessions();
    const tools = await LangChainAdapter.createTools(client);
    const byName = new Map(tools.map((t) => [t.name, t]));
    const accepted = byName.has(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    const schemas = tools.filter((t) => /^send_/.test(t.name)).map((t) => convertToOpenAITool(t).function.parameters);
    let valid = 0;
    const refused = [];
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(profile, call);
      const tool = byName.get(name);
      if (!tool) continue;
      try {
        const out = text(await tool.invoke(args));
        if (out.includes('dry_run') && !out.includes('"isError":true')) valid += 1;
        else refused.push(`${call.via}: ${out.slice(0, 80)}`);
      } catch (err) {
        refused.push(
          `${call.via}: ${String(err?.message ?? err)
            .replace(/\s+/g, ' ')
            .slice(0, 80)}`,
        );
      }
    }
    const bad = shaped(profile, BAD_CALL);
    let badOut = '';
    try {
      badOut = text(await byName.get(bad.name)?.invoke(bad.args));
    } catch (err) {
      badOut = String(err?.message ?? err).replace(/\s+/g, ' ');
    }
    const errorIntact = badOut.includes('FIELD_NOT_ON_CHANNEL');
    const kept = rulesKept(schemas);
    const notes = [];
    if (refused.length) notes.push(`valid calls refused: ${refused.join('; ')}`);
    if (!errorIntact) notes.push(`the caller got: ${badOut.slice(0, 120)}`);
    // What its JSON Schema → zod conversion did to the schema the model gets.
    const lost = [];
    if (!kept) lost.push('drops the per-channel patterns');
    const via = schemas.map((s) => s?.properties?.via ?? s?.properties?.notification?.properties?.via).find(Boolean);
    if (via && !via.enum && !via.anyOf && !via.oneOf) lost.push('drops the via enum');
    const sendAtPatterns = [];
    const walk = (v, key) => {
      if (typeof v !== 'object' || v === null) return;
      if (key === 'send_at' && typeof v.pattern === 'string') sendAtPatterns.push(v.pattern);
      for (const [k, x] of Object.entries(v)) walk(x, key === 'send_at' && k !== 'properties' ? 'send_at' : k);
    };
    walk(schemas);
    if (sendAtPatterns.some((p) => !new RegExp(p).test('2026-07-01T09:00:00+02:00')))
      lost.push("turns send_at's format date-time into a pattern that takes only Z times");
    if (lost.length) notes.push(`client at fault: its JSON Schema → zod conversion ${lost.join(', ')}`);
    return { accepted, rulesKept: kept, valid: `${valid}/3`, errorIntact, note: notes.join('; ') };
  } finally {
    await client.closeAllSessions();
  }
}
