/**
 * `ask`'s context cost on the flat send_notification and each per-channel send tool, measured
 * as the tool against the same tool with `ask` taken out of its schema and its sentence.
 * Issue 37 asked for at most 40 tokens; issue 40 also wants every limit the validator enforces
 * visible to the model, and ask's limits are refinements (keywords would cost 65), so they are
 * said in words (ASK_LIMITS). The schema stays within 40; the words cost about 19 more: 55 in
 * all, over issue 37's figure, said so in docs/tools.md. Each part is guarded here.
 */
import { describe, expect, it } from 'vitest';
import { ASK_LIMITS } from '../../src/channels/ask.js';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig } from '../../src/config/config.js';
import { ROUND, toolTokens } from '../../bench/token-budget.mjs';

type Tool = { name: string; description?: string; inputSchema: { properties?: Record<string, unknown> } };

/** The tool with `ask`'s words taken out of its description (`words`), and its property too (`whole`). */
function withoutAsk(tool: Tool, part: 'words' | 'whole'): Tool {
  const description = tool.description
    ?.replace(/, urgent \(([^)]*)\) and ask \([^)]*\)\./, ' and urgent ($1).')
    .replace(`; ask: ${ASK_LIMITS}.`, '.')
    .replace(` ask: ${ASK_LIMITS}.`, '');
  if (part === 'words') return { ...tool, description };
  const { ask: _ask, ...properties } = tool.inputSchema.properties ?? {};
  return { ...tool, description, inputSchema: { ...tool.inputSchema, properties } };
}

describe('ask context cost', () => {
  const catalog = buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }));
  const tools = [
    catalog.flat.tools.find((t) => t.name === 'send_notification') as Tool,
    ...(catalog['per-channel'].tools as Tool[]).filter((t) => t.name.startsWith('send_')),
  ];

  it('says its limits in every send tool, and costs at most 40 tokens of schema and 20 of words in each', () => {
    const figures = Object.fromEntries(
      tools.map((t) => {
        expect(t.description, t.name).toContain(ASK_LIMITS);
        expect(withoutAsk(t, 'whole').description, t.name).not.toMatch(/\bask\b/);
        const words = toolTokens(t) - toolTokens(withoutAsk(t, 'words'));
        return [t.name, { schema: toolTokens(withoutAsk(t, 'words')) - toolTokens(withoutAsk(t, 'whole')), words }];
      }),
    );
    console.info('ask tokens', figures);
    for (const { schema, words } of Object.values(figures)) {
      expect(schema).toBeLessThanOrEqual(ROUND.ask);
      expect(words).toBeLessThanOrEqual(20);
    }
  });
});
