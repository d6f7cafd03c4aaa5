/**
 * `@google/genai`'s `mcpToTool`: a connected MCP client becomes a CallableTool, and
 * generateContent's automatic function calling runs the loop: it declares the tools to the
 * model, calls the one the model names through the MCP client, and sends the function response
 * back. The model is a canned Gemini endpoint on loopback (httpOptions.baseUrl), so what it was
 * declared and what came back to it are read from the SDK's own requests.
 */
import { createServer } from 'node:http';
import { GoogleGenAI, mcpToTool } from '@google/genai';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped } from './lib.mjs';
import { connectSdkClient } from './sdk-client.mjs';

/** A generateContent endpoint that first answers with `next.call` as a functionCall, then with text; it keeps the requests. */
async function cannedGemini() {
  const state = { call: undefined, requests: [] };
  const server = createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (c) => (body += c))
      .on('end', () => {
        const request = JSON.parse(body || '{}');
        state.requests.push(request);
        const answered = request.contents?.some((c) => c.parts?.some((p) => p.functionResponse));
        const parts = answered ? [{ text: 'done' }] : [{ functionCall: { name: state.call.name, args: state.call.args } }];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
          }),
        );
      });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { state, baseUrl: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

const textOf = (v) => JSON.stringify(v ?? '');

export async function runGoogleGenAi(cell) {
  const client = await connectSdkClient(cell, 'google-genai-mcptotool');
  const gemini = await cannedGemini();
  try {
    const ai = new GoogleGenAI({ apiKey: 'canned', httpOptions: { baseUrl: gemini.baseUrl } });
    const tool = mcpToTool(client);
    const declarations = (await tool.tool()).functionDeclarations ?? [];
    const names = declarations.map((d) => d.name);
    const accepted = names.includes(cell.profile === 'per-channel' ? 'send_sms' : 'send_notification');
    const turn = async (name, args) => {
      gemini.state.requests = [];
      gemini.state.call = { name, args };
      await ai.models.generateContent({ model: 'gemini-canned', contents: 'notify', config: { tools: [tool] } });
      const [first, second] = gemini.state.requests;
      const response = second?.contents?.flatMap((c) => c.parts ?? []).find((p) => p.functionResponse)?.functionResponse.response;
      return { declared: first?.tools?.flatMap((t) => t.functionDeclarations ?? []) ?? [], response };
    };
    let declared = [];
    let valid = 0;
    for (const call of Object.values(VALID_CALLS)) {
      const { name, args } = shaped(cell.profile, call);
      if (!names.includes(name)) continue;
      const r = await turn(name, args);
      declared = r.declared;
      const out = textOf(r.response);
      if (out.includes('dry_run') && !out.includes('"isError":true')) valid += 1;
    }
    const bad = shaped(cell.profile, BAD_CALL);
    const b = names.includes(bad.name) ? await turn(bad.name, bad.args) : {};
    const errorIntact = textOf(b.response).includes('FIELD_NOT_ON_CHANNEL');
    const schemas = declared.filter((d) => /^send_/.test(d.name)).map((d) => d.parametersJsonSchema ?? d.parameters);
    return {
      accepted,
      rulesKept: rulesKept(schemas),
      valid: `${valid}/3`,
      errorIntact,
      note: errorIntact || !b.response ? '' : `the model got: ${textOf(b.response).slice(0, 100)}`,
    };
  } finally {
    await gemini.close();
    await client.close();
  }
}
