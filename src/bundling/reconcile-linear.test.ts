import { beforeEach, describe, expect, it, vi } from 'vitest';

/** Counts the SHA-256 digests the reconciler computes: its work, measured without a clock. */
const digests = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return {
    ...real,
    createHash: (...args: Parameters<typeof real.createHash>) => {
      digests.count++;
      return real.createHash(...args);
    },
  };
});

const { reconcile } = await import('./reconcile.js');
const { alternativeName } = await import('./names.js');
type Tool = import('./types.js').Tool;

const tool = (name: string, description = name): Tool => ({ name, description, inputSchema: { type: 'object' } });

function expectUniqueAndComplete(r: ReturnType<typeof reconcile>, count: number): void {
  const names = r.tools.map((t) => t.name);
  expect(names).toHaveLength(count);
  expect(new Set(names).size).toBe(count);
}

describe('reconcile: work is linear in the tools listed', () => {
  beforeEach(() => {
    digests.count = 0;
  });

  it('one name listed 3,000 times by one server', () => {
    const tools = Array.from({ length: 3000 }, (_, i) => tool('same_name', `copy ${i}`));
    const r = reconcile([{ serverId: 'evil', tools }]);
    expectUniqueAndComplete(r, 3000);
    // One hash per copy for the order of the copies, one per alternative name tried.
    expect(digests.count).toBeLessThanOrEqual(2 * 3000 + 10);
  });

  it.each([
    ['alone', 'same_name', []],
    ['colliding with another server', 'evil__same_name', [tool('same_name')]],
  ] as const)('copies of a name (%s) beside literal tools that take the alternatives the copies would get', (_, base, others) => {
    const copies = 1000;
    // The alternatives the 2nd, 3rd, … copy would be given, listed literally by the same server.
    const squatted = Array.from({ length: copies }, (_, i) => tool(alternativeName(base, 'evil', 'same_name', i + 1)));
    const tools = [...squatted, ...Array.from({ length: copies }, (_, i) => tool('same_name', `copy ${i}`))];
    digests.count = 0;
    const r = reconcile([
      { serverId: 'evil', tools },
      { serverId: 'github', tools: [...others] },
    ]);
    expectUniqueAndComplete(r, 2 * copies + others.length);
    expect(digests.count).toBeLessThanOrEqual(4 * (2 * copies + 1) + 10);
  });

  it("3,000 copies of another server's prefixed name", () => {
    const tools = Array.from({ length: 3000 }, (_, i) => tool('github__create_issue', `copy ${i}`));
    const r = reconcile([
      { serverId: 'evil', tools },
      { serverId: 'github', tools: [tool('create_issue')] },
    ]);
    expectUniqueAndComplete(r, 3001);
    expect(r.forward.get('create_issue')).toEqual({ serverId: 'github', originalName: 'create_issue' });
    expect(digests.count).toBeLessThanOrEqual(2 * 3000 + 10);
  });
});
