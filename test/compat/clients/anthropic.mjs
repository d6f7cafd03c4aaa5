/**
 * The Anthropic SDK's MCP helpers: `mcpTools` turns the tools an MCP client lists into runnable
 * tools, and `client.beta.messages.toolRunner` runs the loop: it sends them to the model, runs
 * the tool_use the model answers with through the MCP client, and sends the tool_result back.
 * The model is canned (the SDK's `fetch` answers), so what it was handed and what came back to
 * it are read from the SDK's own requests.
 */
import Anthropic from '@anthropic-ai/sdk';
import { mcpTools } from '@anthropic-ai/sdk/helpers/beta/mcp';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped } from './lib.mjs';
import { connectSdkClient } from './sdk-client.mjs';

const message = (content, stop_reason) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-canned',
  content,
  stop_reason,
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});

/** One loop in which the model calls `name` with `args`; resolves to the tools it was handed and the tool_result it got back. */
async function turn(tools, name, args) {
  const requests = [];
  const anthropic = new Anthropic({
    apiKey: 'canned',
    maxRetries: 0,
    fetch: async (_url, init) => {
      const body = JSON.parse(init.body);
      requests.push(body);
      const answer =
        requests.length === 1
          ? message([{ type: 'tool_use', id: 'toolu_1', name, input: args }], 'tool_use')
          : message([{ type: 'text', text: 'done' }], 'end_turn');
      return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  await anthropic.beta.messages.toolRunner({
    model: 'claude-canned',
    max_tokens: 64,
    max_iterations: 2,
    messages: [{ role: 'user', content: 'notify' }],
    tools,
  });
  const result = requests[1]?.messages.at(-1)?.content?.find((b) => b.type === 'tool_result');
  return { handed: requests[0]?.tools ?? [], result };
}

const textOf = (result) => JSON.stringify(result?.content ?? '');

export async function runAnthropic(cell) {
  const client = await connectSdkClient(cell, 'anthropic-sdk-mcp-helpers');
  try {
    const { tools: listed } = await client.listTools();
    const tools = mcpTools(listed, client);
    const names = tools.map((t) => t.name);
    const accepted = names.includes(cell.profile === 'per-channel' ? 'send_sms' : 'send_notification');
    let handed = [];
    let valid = 0;
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(cell.profile, call);
      if (!names.includes(name)) continue;
      const r = await turn(tools, name, args);
      handed = r.handed;
      if (r.result && !r.result.is_error && textOf(r.result).includes('dry_run')) valid += 1;
    }
    const bad = shaped(cell.profile, BAD_CALL);
    const b = names.includes(bad.name) ? await turn(tools, bad.name, bad.args) : {};
    const errorIntact = textOf(b.result).includes('FIELD_NOT_ON_CHANNEL');
    const schemas = handed.filter((t) => /^send_/.test(t.name)).map((t) => t.input_schema);
    return {
      accepted,
      rulesKept: rulesKept(schemas),
      valid: `${valid}/3`,
      errorIntact,
      note: errorIntact || !b.result ? '' : `the model got: ${textOf(b.result).slice(0, 100)}`,
    };
  } finally {
    await client.close();
  }
}
