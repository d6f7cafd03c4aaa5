import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { assertProperty } from '../../test/helpers/property.js';
import { reconcile, tagDescription, type Tool } from './index.js';

const long =
  'Create a new issue in a GitHub repository, with a title, a body in Markdown, labels, assignees and a milestone.';

describe('tagDescription: where the tag goes', () => {
  it('keeps a short one-line description on the tag line', () => {
    expect(tagDescription('Create an issue.', 'GitHub')).toBe('[GitHub] Create an issue.');
    expect(tagDescription('x'.repeat(80), 'GitHub')).toBe(`[GitHub] ${'x'.repeat(80)}`);
  });

  it('puts the tag on its own line before a long description', () => {
    expect(tagDescription(long, 'GitHub')).toBe(`[GitHub]\n${long}`);
    expect(tagDescription('x'.repeat(81), 'GitHub')).toBe(`[GitHub]\n${'x'.repeat(81)}`);
  });

  it('puts the tag on its own line before a multi-line description, however short', () => {
    expect(tagDescription('Create an issue.\n\nArgs: title', 'GitHub')).toBe('[GitHub]\nCreate an issue.\n\nArgs: title');
    expect(tagDescription('a\r\nb', 'GitHub')).toBe('[GitHub]\na\r\nb');
  });

  it('applies the tag once, in either form', () => {
    const tagged = tagDescription(long, 'GitHub');
    expect(tagDescription(tagged, 'GitHub')).toBe(tagged);
    expect(tagDescription('[GitHub] Create an issue.', 'GitHub')).toBe('[GitHub] Create an issue.');
    expect(tagDescription('[GitHub]\r\nCreate an issue.', 'GitHub')).toBe('[GitHub]\r\nCreate an issue.');
    // Another server's tag is not ours: ours goes in front of it.
    expect(tagDescription('[Linear] Create an issue.', 'GitHub')).toBe('[GitHub] [Linear] Create an issue.');
  });

  it('is idempotent and keeps the description whole, for any text and label (property)', async () => {
    await assertProperty(
      'tagDescription is idempotent',
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 12 }), (text, label) => {
        const once = tagDescription(text, label);
        expect(tagDescription(once, label)).toBe(once);
        expect(once.endsWith(text)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('reconcile: provenance tags on long descriptions', () => {
  it('puts the tag on its own line for a long description, once, through two reconciles', () => {
    const tool = (description: string): Tool => ({ name: 'create_issue', description, inputSchema: { type: 'object' } });
    const first = reconcile([
      { serverId: 'github', label: 'GitHub', tools: [tool(long)] },
      { serverId: 'linear', label: 'Linear', tools: [tool('Create an issue.')] },
    ]);
    expect(first.tools.map((t) => t.description)).toEqual([`[GitHub]\n${long}`, '[Linear] Create an issue.']);
    const again = reconcile([
      { serverId: 'github', label: 'GitHub', tools: [tool(first.tools[0]!.description!)] },
      { serverId: 'linear', label: 'Linear', tools: [tool(first.tools[1]!.description!)] },
    ]);
    expect(again.tools.map((t) => t.description)).toEqual(first.tools.map((t) => t.description));
  });
});
