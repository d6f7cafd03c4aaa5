/**
 * Mastra's `@mastra/mcp`: MCPClient lists the tools as Mastra tools (`<server>_<tool>`), whose
 * input schema is what an agent hands its model, and each call goes through the tool's own
 * execute, which checks the input against that schema before the server sees it.
 */
import { MCPClient } from '@mastra/mcp';
import { BAD_CALL, rulesKept, shaped, stdioServer, validSent } from './lib.mjs';

const text = (v) => (v instanceof Error ? v.message : typeof v === 'string' ? v : JSON.stringify(v));

/** The JSON Schema a Mastra tool hands on (a Standard JSON Schema wrapper in @mastra/core 1.x). */
function jsonSchemaOf(tool) {
  const std = tool.inputSchema?.['~standard'];
  if (std?.jsonSchema?.input) return std.jsonSchema.input({ target: 'draft-2020-12' });
  return tool.inputSchema?.jsonSchema ?? tool.inputSchema;
}

export async function runMastra({ profile, url }) {
  const mcp = new MCPClient({
    id: `compat-${profile}-${url ? 'http' : 'stdio'}`,
    servers: { notify: url ? { url: new URL(url) } : stdioServer(profile) },
  });
  try {
    const listed = await mcp.listTools();
    const tools = new Map(Object.entries(listed).map(([k, t]) => [k.replace(/^notify_/, ''), t]));
    const accepted = tools.has(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    const run = async (name, args) => {
      try {
        return text(await tools.get(name).execute(args, {}));
      } catch (err) {
        return text(err);
      }
    };
    const valid = await validSent(profile, (name) => tools.has(name), run);
    const bad = shaped(profile, BAD_CALL);
    const badOut = tools.has(bad.name) ? await run(bad.name, bad.args) : '';
    const errorIntact = badOut.includes('FIELD_NOT_ON_CHANNEL');
    const schemas = [...tools].filter(([n]) => /^send_/.test(n)).map(([, t]) => jsonSchemaOf(t));
    return {
      accepted,
      rulesKept: rulesKept(schemas),
      valid: `${valid}/3`,
      errorIntact,
      note: errorIntact ? '' : `the caller got: ${badOut.split('\n')[0].slice(0, 120)}`,
    };
  } finally {
    await mcp.disconnect();
  }
}
