/**
 * Clients for the approval suites: a v2 SDK client of either era that declares form
 * elicitation and answers each question with what the test says (and keeps every question),
 * or one that declares nothing and so cannot ask. Raw 2026-07-28 lines for the rounds an SDK
 * client would never send (another payload with an approved state).
 */
import { Client } from '@modelcontextprotocol/client';
import { ChildStdioTransport } from './cli.js';
import { MODERN_VERSION, type Era } from './mcp-cli.js';

export type Answer = 'accept' | 'decline' | 'cancel' | 'refuse';

export interface AskingClient {
  client: Client;
  /** Every question the server put, in order. */
  questions: string[];
  /** How the next questions are answered; a function may wait (a person thinking). */
  answer: Answer | (() => Promise<Answer>);
}

export function askingClient(name: string, era: Era, answer: AskingClient['answer'] = 'accept'): AskingClient {
  const client = new Client(
    { name, version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} } },
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {}),
    },
  );
  const asking: AskingClient = { client, questions: [], answer };
  client.setRequestHandler('elicitation/create', async (request) => {
    asking.questions.push(request.params.message);
    const a = typeof asking.answer === 'function' ? await asking.answer() : asking.answer;
    if (a === 'cancel' || a === 'decline') return { action: a };
    return { action: 'accept', content: { approve: a === 'accept' } };
  });
  return asking;
}

/** A client that declares no elicitation: it cannot put a question to anyone. */
export function mutedClient(name: string, era: Era): Client {
  return new Client({ name, version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {});
}

export const modernMeta = (clientName: string, elicitation = true) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': elicitation ? { elicitation: { form: {} } } : {},
  'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1' },
});

/** Raw newline-delimited JSON-RPC over the CLI's stdio, answers matched by id. */
export async function rawSession(transport: ChildStdioTransport) {
  const waiting = new Map<number, (m: Record<string, any>) => void>();
  transport.onmessage = (m) => {
    const id = (m as { id?: number }).id;
    if (id !== undefined) waiting.get(id)?.(m as Record<string, any>);
  };
  await transport.start();
  let next = 1;
  return {
    request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
      const id = next++;
      const answer = new Promise<Record<string, any>>((resolve) => waiting.set(id, resolve));
      void transport.send({ jsonrpc: '2.0', id, method, params });
      return answer;
    },
  };
}
