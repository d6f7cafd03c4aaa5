/**
 * LangChain's `@langchain/mcp-adapters`: MultiServerMCPClient loads the tools as LangChain
 * tools; what a chat model is handed is LangChain's own conversion (convertToOpenAITool), and
 * each call goes through tool.invoke, which checks the input against the tool's schema itself
 * before the server sees it.
 */
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped, stdioServer } from './lib.mjs';

const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

export async function runLangChain({ profile, url }) {
  const client = new MultiServerMCPClient({
    throwOnLoadError: true,
    mcpServers: { notify: url ? { transport: 'http', url } : { transport: 'stdio', ...stdioServer(profile) } },
  });
  try {
    const tools = await client.getTools();
    const byName = new Map(tools.map((t) => [t.name.replace(/^mcp__notify__/, ''), t]));
    const accepted = byName.has(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    const schemas = tools.filter((t) => /send_/.test(t.name)).map((t) => convertToOpenAITool(t).function.parameters);
    let valid = 0;
    const notes = [];
    const refused = [];
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(profile, call);
      const tool = byName.get(name);
      if (!tool) continue;
      try {
        const out = text(await tool.invoke(args));
        if (out.includes('dry_run') && !out.includes('"isError":true')) valid += 1;
      } catch (err) {
        refused.push(call.via);
        if (!/did not match expected schema/.test(String(err?.message ?? err)))
          notes.push(
            `${call.via}: ${String(err?.message ?? err)
              .split('\n')[0]
              .slice(0, 80)}`,
          );
      }
    }
    const bad = shaped(profile, BAD_CALL);
    let errorIntact = false;
    try {
      errorIntact = text(await byName.get(bad.name)?.invoke(bad.args)).includes('FIELD_NOT_ON_CHANNEL');
    } catch (err) {
      errorIntact = String(err?.message ?? err).includes('FIELD_NOT_ON_CHANNEL');
      if (!errorIntact)
        notes.push(
          `client at fault: its own check answers the bad call ("Received tool input did not match expected schema") against the schema it simplified, before the server (langchain-ai/langchainjs#10905)`,
        );
    }
    const kept = rulesKept(schemas);
    if (!kept)
      notes.push(
        'client at fault: its simplification turns a field that is an anyOf (flat `to`: email or E.164) into `{}`, so the model sees no rule for it (langchain-ai/langchainjs#11302)',
      );
    if (refused.length)
      notes.unshift(
        `client at fault: it merges the union's branches and refuses valid ${refused.join(' and ')} calls itself (langchain-ai/langchainjs#11302)`,
      );
    return { accepted, rulesKept: kept, valid: `${valid}/3`, errorIntact, note: notes.join('; ') };
  } finally {
    await client.close();
  }
}
