/**
 * Genkit (`genkit` with `@genkit-ai/mcp`): createMcpClient connects, getActiveTools hands
 * Genkit tools (`<name>/<tool>`), and ai.generate runs the loop with a canned model defined
 * in Genkit itself (ai.defineModel): it answers first with a toolRequest, then with text. What
 * the model was handed (each tool's inputSchema) and what came back to it (the toolResponse)
 * are read from the requests Genkit gave that model. Genkit checks a tool request against the
 * tool's schema before calling it; when that check, or anything else, throws out of
 * generate(), the caller gets the exception and the model never sees a response.
 */
import { createMcpClient } from '@genkit-ai/mcp';
import { genkit } from 'genkit';
import { logger } from 'genkit/logging';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped, stdioServer } from './lib.mjs';

const textOf = (v) => (typeof v === 'string' ? v : JSON.stringify(v ?? ''));

// Genkit logs each dynamic tool re-registered by the next generate() as an ERROR: noise here.
const quiet = () => {};
logger.init({ level: 'error', debug: quiet, info: quiet, warn: quiet, error: quiet });

export async function runGenkit({ profile, url }) {
  const ai = genkit({});
  const state = { call: undefined, requests: [] };
  ai.defineModel({ name: 'compat/canned', supports: { tools: true, multiturn: true } }, async (request) => {
    state.requests.push(request);
    const answered = request.messages.some((m) => m.content?.some((p) => p.toolResponse));
    const content = answered ? [{ text: 'done' }] : [{ toolRequest: { name: state.call.name, ref: '1', input: state.call.args } }];
    return { message: { role: 'model', content }, finishReason: 'stop' };
  });
  const server = url ? { url } : { ...stdioServer(profile) };
  const client = createMcpClient({ name: 'notify', mcpServer: server });
  try {
    await client.ready();
    const tools = await client.getActiveTools(ai);
    const names = new Map(tools.map((t) => [t.__action.name.replace(/^.*\//, ''), t]));
    const accepted = names.has(profile === 'per-channel' ? 'send_sms' : 'send_notification');
    let declared = [];
    const turn = async (name, args) => {
      state.requests = [];
      state.call = { name, args };
      try {
        await ai.generate({ model: 'compat/canned', prompt: 'notify', tools });
      } catch (err) {
        return {
          thrown: String(err?.message ?? err)
            .replace(/\s+/g, ' ')
            .trim(),
        };
      } finally {
        if (state.requests[0]) declared = state.requests[0].tools ?? [];
      }
      const response = state.requests[1]?.messages.flatMap((m) => m.content ?? []).find((p) => p.toolResponse)?.toolResponse.output;
      return { response };
    };
    let valid = 0;
    const notes = [];
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(profile, call);
      if (!names.has(name)) continue;
      const r = await turn(name, args);
      const out = textOf(r.response);
      if (r.thrown) notes.push(`valid ${call.via}: generate() threw: ${r.thrown.slice(0, 100)}`);
      else if (out.includes('dry_run') && !out.includes('"isError":true')) valid += 1;
    }
    const bad = shaped(profile, BAD_CALL);
    const b = names.has(bad.name) ? await turn(bad.name, bad.args) : {};
    const errorIntact = !b.thrown && textOf(b.response).includes('FIELD_NOT_ON_CHANNEL');
    if (b.thrown)
      notes.push(
        `client at fault: its own check of the call against the tool's schema throws out of generate(), so the model never sees the server's error: ${b.thrown.slice(0, 140)}`,
      );
    else if (!errorIntact && b.response !== undefined) notes.push(`the model got: ${textOf(b.response).slice(0, 100)}`);
    const schemas = declared.filter((d) => /send_/.test(d.name)).map((d) => d.inputSchema);
    return { accepted, rulesKept: rulesKept(schemas), valid: `${valid}/3`, errorIntact, note: notes.join('; ') };
  } finally {
    await client.disable?.();
  }
}
