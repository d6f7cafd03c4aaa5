import { describe, expect, it } from 'vitest';
import { formatProblem, formatRequest, type WebhookMessage } from './formats.js';
import type { WebhookFormat } from './targets.js';

const problem = (format: WebhookFormat, m: WebhookMessage) =>
  formatProblem(format, m, formatRequest(format, m, `ntf_${'0'.repeat(32)}`).body);
const field = (name: string, value: string) => ({ name, value });

describe("each format's own limit, at its edge", () => {
  it('discord: content 2,000; in an embed 4,096, title 256, a field 256/1,024 and not empty, 6,000 in all', () => {
    expect(problem('discord', { text: 'x'.repeat(2000) })).toBeUndefined();
    expect(problem('discord', { text: 'x'.repeat(2001) })).toMatch(/2000/);
    expect(problem('discord', { text: 'x'.repeat(4096), title: 't' })).toBeUndefined();
    expect(problem('discord', { text: 'x'.repeat(4097), title: 't' })).toMatch(/4096/);
    expect(problem('discord', { text: 'x', title: 't'.repeat(257) })).toMatch(/256/);
    expect(problem('discord', { text: 'x', fields: [field('', 'v')] })).toMatch(/not empty/);
    expect(problem('discord', { text: 'x', fields: [field('n', 'v'.repeat(1025))] })).toMatch(/1024/);
    const fields = Array.from({ length: 5 }, () => field('n', 'v'.repeat(1000)));
    expect(problem('discord', { text: 'x'.repeat(991), title: 'abcd', fields })).toBeUndefined();
    expect(problem('discord', { text: 'x'.repeat(992), title: 'abcd', fields })).toMatch(/6000 characters in all/);
  });

  it('ntfy: 4,096 bytes of body, fields included', () => {
    expect(problem('ntfy', { text: 'x'.repeat(4096) })).toBeUndefined();
    expect(problem('ntfy', { text: 'é'.repeat(2048) })).toBeUndefined();
    expect(problem('ntfy', { text: 'é'.repeat(2048), fields: [field('a', 'b')] })).toMatch(/4096 bytes/);
  });

  it('google-chat: 4,096 characters of text; teams: 28 KB of message; standard: none of its own', () => {
    expect(problem('google-chat', { text: 'x'.repeat(4096) })).toBeUndefined();
    expect(problem('google-chat', { text: 'x'.repeat(4097) })).toMatch(/4096/);
    expect(problem('teams', { text: 'x'.repeat(28_500) })).toMatch(/28672 bytes/);
    expect(problem('teams', { text: 'x'.repeat(28_000) })).toBeUndefined();
    expect(problem('standard', { text: 'x'.repeat(40_000) })).toBeUndefined();
  });
});
