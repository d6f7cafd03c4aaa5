/**
 * The OpenAI Agents SDK (JS): MCPServerStdio lists the tools and mcpToFunctionTool makes the
 * function tools an agent hands its model, asked for strict schemas (convertSchemasToStrict,
 * which it drops for a schema it cannot make strict); each call goes through the function
 * tool's own invoke, as a run does with the model's arguments.
 */
import { MCPServerStdio, MCPServerStreamableHttp, RunContext, mcpToFunctionTool } from '@openai/agents';
import { BAD_CALL, rulesKept, shaped, stdioServer, validSent } from './lib.mjs';

const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

export async function runOpenAiAgents({ profile, url }) {
  const server = url
    ? new MCPServerStreamableHttp({ name: 'notify', url, cacheToolsList: false, clientSessionTimeoutSeconds: 30 })
    : // The SDK's own 5 s request timeout was outrun once by a cold stdio start on a loaded CI machine.
      new MCPServerStdio({ name: 'notify', ...stdioServer(profile), cacheToolsList: false, clientSessionTimeoutSeconds: 30 });
  await server.connect();
  try {
    const listed = await server.listTools();
    const tools = new Map(listed.map((t) => [t.name, mcpToFunctionTool(t, server, true)]));
    const accepted = tools.has(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    const send = [...tools.values()].filter((t) => /^send_/.test(t.name));
    const strict = send.every((t) => t.strict === true);
    const run = async (name, args) => text(await tools.get(name)?.invoke(new RunContext(), JSON.stringify(args)));
    const valid = await validSent(profile, (name) => tools.has(name), run);
    const bad = shaped(profile, BAD_CALL);
    const errorIntact = (await run(bad.name, bad.args)).includes('FIELD_NOT_ON_CHANNEL');
    return {
      accepted,
      rulesKept: rulesKept(send.map((t) => t.parameters)),
      valid: `${valid}/3`,
      errorIntact,
      note: strict ? 'strict' : 'not strict (the SDK fell back)',
    };
  } finally {
    await server.close();
  }
}
