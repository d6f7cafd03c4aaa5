/**
 * Clients for the approval suites: a v2 SDK client of either era that declares form
 * elicitation and answers each question with what the test says (and keeps every question),
 * or one that declares nothing and so cannot ask.
 */
import { Client } from '@modelcontextprotocol/client';
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
