/**
 * The Vercel AI SDK 7 (`ai` + `@ai-sdk/mcp`): its MCP client lists the tools and converts
 * them, generateText hands them to a model (a canned one that answers with the tool call
 * given), and the SDK checks the call's input against the converted schema before it runs
 * the tool on the server. What the model was handed is read from the model's own call.
 */
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped, stdioServer } from './lib.mjs';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** One model turn that calls `name` with `args`; resolves to what the SDK made of it and what the model was handed. */
export async function turn(tools, name, args) {
  let handed;
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      handed = options.tools;
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: name, input: JSON.stringify(args) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
  const result = await generateText({ model, tools, prompt: 'notify', stopWhen: stepCountIs(1) });
  const parts = result.steps[0].content;
  const output = parts.find((p) => p.type === 'tool-result')?.output;
  const error = parts.find((p) => p.type === 'tool-error')?.error;
  return { handed, output, error };
}

const textOf = (output) => JSON.stringify(output ?? '');

export async function runAiSdk({ profile, url }) {
  const client = await createMCPClient({
    transport: url ? { type: 'http', url } : new Experimental_StdioMCPTransport({ ...stdioServer(profile) }),
  });
  try {
    const tools = await client.tools();
    const names = Object.keys(tools);
    const accepted = names.includes(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    let handed = [];
    let valid = 0;
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(profile, call);
      if (!tools[name]) continue;
      const r = await turn(tools, name, args);
      handed = r.handed ?? handed;
      if (r.output && !r.output.isError && textOf(r.output).includes('dry_run')) valid += 1;
    }
    const bad = shaped(profile, BAD_CALL);
    const b = tools[bad.name] ? await turn(tools, bad.name, bad.args) : {};
    const errorIntact = textOf(b.output).includes('FIELD_NOT_ON_CHANNEL');
    const schemas = (handed ?? []).filter((t) => /^send_/.test(t.name)).map((t) => t.inputSchema);
    return {
      accepted,
      rulesKept: rulesKept(schemas),
      valid: `${valid}/3`,
      errorIntact,
      note: errorIntact
        ? ''
        : b.error
          ? `the SDK answered itself: ${String(b.error.message ?? b.error)
              .split('\n')[0]
              .slice(0, 120)}`
          : '',
    };
  } finally {
    await client.close();
  }
}
