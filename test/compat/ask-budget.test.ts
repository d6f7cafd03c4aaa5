/**
 * Issue 37's context cost: `ask` adds at most 40 tokens (o200k) to the flat send_notification,
 * measured as the tool against the same tool with `ask` taken out of its schema and sentence.
 */
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig } from '../../src/config/config.js';
import { ROUND, toolTokens } from '../../bench/token-budget.mjs';

type Tool = { name: string; description?: string; inputSchema: { properties?: Record<string, unknown> } };

function withoutAsk(tool: Tool): Tool {
  const { ask: _ask, ...properties } = tool.inputSchema.properties ?? {};
  const description = tool.description?.replace(/, urgent \(([^)]*)\) and ask\./, ' and urgent ($1).');
  return { ...tool, description, inputSchema: { ...tool.inputSchema, properties } };
}

describe('ask context cost', () => {
  const catalog = buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }));

  it('adds at most 40 tokens to the flat send_notification, and as much to each per-channel send tool', () => {
    const send = catalog.flat.tools.find((t) => t.name === 'send_notification') as Tool;
    expect(withoutAsk(send).description).not.toMatch(/\bask\b/);
    const figures = Object.fromEntries(
      [send, ...(catalog['per-channel'].tools as Tool[]).filter((t) => t.name.startsWith('send_'))].map((t) => [
        t.name,
        toolTokens(t) - toolTokens(withoutAsk(t)),
      ]),
    );
    console.info('ask tokens', figures);
    for (const added of Object.values(figures)) expect(added).toBeLessThanOrEqual(ROUND.ask);
  });
});
