/**
 * LangChain's `@langchain/mcp-adapters`: MultiServerMCPClient loads the tools as LangChain
 * tools; what a chat model is handed is LangChain's own conversion (convertToOpenAITool), and
 * each call goes through tool.invoke, which checks the input against the tool's schema itself
 * before the server sees it.
 */
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { BAD_CALL, CLI, SERVER_NODE, VALID_CALLS, rulesKept, serverEnv, shaped } from './lib.mjs';

const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

export async function runLangChain({ profile, url }) {
  const client = new MultiServerMCPClient({
    throwOnLoadError: true,
    mcpServers: { notify: url ? { transport: 'http', url } : { transport: 'stdio', command: SERVER_NODE, args: [CLI], env: serverEnv(profile) } },
  });
  try {
    const tools = await client.getTools();
    const byName = new Map(tools.map((t) => [t.name.replace(/^mcp__notify__/, ''), t]));
    const accepted = byName.has(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    const schemas = tools.filter((t) => /send_/.test(t.name)).map((t) => convertToOpenAITool(t).function.parameters);
    let valid = 0;
    const notes = [];
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(profile, call);
      const tool = byName.get(name);
      if (!tool) continue;
      try {
        const out = text(await tool.invoke(args));
        if (out.includes('dry_run') && !out.includes('"isError":true')) valid += 1;
      } catch (err) {
        notes.push(`${call.via} refused by LangChain: ${String(err?.message ?? err).split('\n')[0].slice(0, 80)}`);
      }
    }
    const bad = shaped(profile, BAD_CALL);
    let errorIntact = false;
    try {
      errorIntact = text(await byName.get(bad.name)?.invoke(bad.args)).includes('FIELD_NOT_ON_CHANNEL');
    } catch (err) {
      errorIntact = String(err?.message ?? err).includes('FIELD_NOT_ON_CHANNEL');
      if (!errorIntact) notes.push(`bad call answered by LangChain's own check: ${String(err?.message ?? err).split('\n')[0].slice(0, 80)}`);
    }
    return { accepted, rulesKept: rulesKept(schemas), valid: `${valid}/3`, errorIntact, note: notes.join('; ') };
  } finally {
    await client.close();
  }
}
