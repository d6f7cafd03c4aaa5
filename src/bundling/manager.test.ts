import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { createLogger } from '../core/log.js';
import { BundleManager, listFingerprint, UpstreamUnavailableError, type CallUpstream, type Tool, type ToolTarget } from './index.js';

const tool = (name: string, props: NonNullable<Tool['inputSchema']['properties']> = { q: { type: 'string' } }): Tool => ({
  name,
  description: `does ${name}`,
  inputSchema: { type: 'object', properties: props },
});
const ok = (text: string): CallToolResult => ({ content: [{ type: 'text', text }] });
const textOf = (r: CallToolResult) => (r.content[0] as { text: string }).text;

function captureLog() {
  const lines: Record<string, unknown>[] = [];
  return { lines, log: createLogger('debug', (l) => void lines.push(JSON.parse(l))) };
}

/** An upstream that records calls and answers `<server>:<name>`. */
function echoUpstream() {
  const calls: ToolTarget[] = [];
  const callUpstream: CallUpstream = async (target) => {
    calls.push(target);
    return ok(`${target.serverId}:${target.originalName}`);
  };
  return { calls, callUpstream };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('BundleManager', () => {
  it('notifies listeners when the list changes, and only then; fingerprint follows the list', () => {
    const m = new BundleManager(echoUpstream());
    const seen: string[] = [];
    m.onChange((s) => seen.push(s.fingerprint));
    const empty = m.fingerprint;
    expect(empty).toMatch(/^[0-9a-f]{16}$/);

    m.register('github', [tool('create_issue')]);
    expect(seen).toHaveLength(1);
    expect(m.fingerprint).not.toBe(empty);
    expect(m.fingerprint).toBe(listFingerprint(m.current.reconciled.tools));

    const fp1 = m.fingerprint;
    m.register('github', [tool('create_issue')]); // same tools again
    expect(seen).toHaveLength(1);
    expect(m.fingerprint).toBe(fp1);

    m.register('linear', [tool('create_issue')]);
    expect(seen).toHaveLength(2);
    expect(m.current.reconciled.tools.map((t) => t.name)).toEqual(['github__create_issue', 'linear__create_issue']);
    const fp2 = m.fingerprint;
    expect(fp2).not.toBe(fp1);

    expect(m.unregister('linear')).toBe(true);
    expect(m.fingerprint).toBe(fp1); // back to the same list, same fingerprint
    expect(m.unregister('linear')).toBe(false);
    expect(seen).toEqual([fp1, fp2, fp1]);
  });

  it('applies a rebuilt list only when the last open turn ends', async () => {
    const up = echoUpstream();
    const m = new BundleManager(up);
    m.register('github', [tool('create_issue')]);
    const changes: string[] = [];
    m.onChange((s) => changes.push(s.fingerprint));

    const t1 = m.beginTurn();
    const t2 = m.beginTurn();
    const before = m.fingerprint;
    m.register('linear', [tool('create_issue')]); // renames create_issue → github__create_issue
    expect(m.pending).toBe(true);
    expect(m.fingerprint).toBe(before);
    expect(m.current.reconciled.tools.map((t) => t.name)).toEqual(['create_issue']);
    // Calls inside the turn still use the names the model was shown.
    expect(textOf(await t1.call('create_issue'))).toBe('github:create_issue');

    t1.end();
    t1.end(); // idempotent: must not close t2's turn
    expect(m.pending).toBe(true);
    expect(changes).toEqual([]);
    t2.end();
    expect(m.pending).toBe(false);
    expect(changes).toHaveLength(1);
    expect(m.current.reconciled.tools.map((t) => t.name)).toEqual(['github__create_issue', 'linear__create_issue']);
    // A new turn sees the new list; the old name is now unknown and the error lists the new ones.
    const r = await m.call('create_issue');
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('github__create_issue, linear__create_issue');
    expect(textOf(await m.call('linear__create_issue'))).toBe('linear:create_issue');
  });

  it('resolves an in-flight call against the list it started with', async () => {
    const gate = deferred<CallToolResult>();
    const calls: ToolTarget[] = [];
    const m = new BundleManager({
      callUpstream: (target) => {
        calls.push(target);
        return gate.promise;
      },
    });
    m.register('github', [tool('create_issue')]);
    const inFlight = m.call('create_issue', { title: 't' });
    m.unregister('github');
    m.register('linear', [tool('create_issue')]); // same name, other server
    expect(m.pending).toBe(true);
    expect(m.current.reconciled.forward.get('create_issue')?.serverId).toBe('github');
    gate.resolve(ok('done'));
    expect(textOf(await inFlight)).toBe('done');
    expect(calls).toEqual([{ serverId: 'github', originalName: 'create_issue' }]);
    expect(m.pending).toBe(false);
    expect(m.current.reconciled.forward.get('create_issue')?.serverId).toBe('linear');
  });

  it('swaps routing even when the served list is byte-identical', async () => {
    const up = echoUpstream();
    const m = new BundleManager(up);
    m.register('a', [tool('x')]);
    const fp = m.fingerprint;
    m.unregister('a');
    m.register('b', [tool('x')]);
    expect(m.fingerprint).toBe(fp);
    expect(textOf(await m.call('x'))).toBe('b:x');
  });

  it('logs each tool schema hash on register and warns when a tool keeps its name but changes', () => {
    const { lines, log } = captureLog();
    const m = new BundleManager({ ...echoUpstream(), log });
    m.register('github', [tool('create_issue'), tool('list_repos')]);
    const registered = lines.filter((l) => l.msg === 'bundle tool registered');
    expect(registered.map((l) => [l.server, l.tool])).toEqual([
      ['github', 'create_issue'],
      ['github', 'list_repos'],
    ]);
    for (const l of registered) expect(l.schema_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);

    m.register('github', [tool('create_issue'), tool('list_repos')]); // unchanged
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);

    // Drift after a reconnect (unregister, then register with a changed nested schema).
    m.unregister('github');
    m.register('github', [tool('create_issue', { q: { type: 'integer' } }), tool('list_repos')]);
    const warns = lines.filter((l) => l.level === 'warn');
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ server: 'github', tool: 'create_issue' });
    expect(warns[0]!.previous_hash).toBe(registered[0]!.schema_hash);
    expect(warns[0]!.schema_hash).not.toBe(warns[0]!.previous_hash);

    // A same-named tool on another server is not drift.
    m.register('linear', [tool('create_issue', { other: { type: 'boolean' } })]);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });

  it('does not call a reordered `required` or `enum` drift, but the fingerprint follows the bytes', () => {
    const { lines, log } = captureLog();
    const m = new BundleManager({ ...echoUpstream(), log });
    const schema = (order: <T>(xs: T[]) => T[]): Tool => ({
      name: 'create_issue',
      inputSchema: {
        type: 'object',
        properties: { title: { type: 'string' }, state: { type: 'string', enum: order(['open', 'closed', 'draft']) } },
        required: order(['title', 'state']),
      },
    });
    const changes: string[] = [];
    m.onChange((s) => changes.push(s.fingerprint));
    m.register('github', [schema((xs) => xs)]);
    const fp = m.fingerprint;
    m.unregister('github');
    m.register('github', [schema((xs) => [...xs].reverse())]);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(m.fingerprint).not.toBe(fp); // the bytes a client caches did change
    expect(changes).toHaveLength(3);
    // The same semantic hash: logged once, at the first register (a changed hash logs again).
    const hashes = lines.filter((l) => l.msg === 'bundle tool registered').map((l) => l.schema_hash);
    expect(hashes).toHaveLength(1);
  });

  it('does not mistake two tools for one when a `:` makes `serverId:name` equal', () => {
    const { lines, log } = captureLog();
    const m = new BundleManager({ ...echoUpstream(), log });
    m.register('a:b', [tool('c')]);
    m.register('a', [tool('b:c', { other: { type: 'boolean' } })]);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('a throwing listener does not break the manager or other listeners', () => {
    const { lines, log } = captureLog();
    const m = new BundleManager({ ...echoUpstream(), log });
    let heard = 0;
    m.onChange(() => {
      throw new Error('boom');
    });
    m.onChange(() => void heard++);
    m.register('a', [tool('x')]);
    expect(heard).toBe(1);
    expect(lines.some((l) => l.msg === 'bundle change listener failed')).toBe(true);
  });
});

describe('BundleManager: the log of a list that keeps being sent', () => {
  it('logs each tool once and one rebuild at info, however often the same list arrives', () => {
    const { lines, log } = captureLog();
    const m = new BundleManager({ ...echoUpstream(), log });
    const tools = Array.from({ length: 300 }, (_, i) => tool(`t${i}`));
    for (let i = 0; i < 100; i++) m.register('evil', tools);
    expect(lines.filter((l) => l.msg === 'bundle tool registered')).toHaveLength(300);
    expect(lines.filter((l) => l.msg === 'bundle rebuilt' && l.level === 'info')).toHaveLength(1);
    // A rebuild that changes the list names at most 50 renames, and counts the rest.
    m.register('other', tools);
    const rebuilt = lines.filter((l) => l.msg === 'bundle rebuilt' && l.level === 'info').at(-1)!;
    expect(rebuilt.renames).toHaveLength(51);
    expect((rebuilt.renames as string[]).at(-1)).toBe('… and 550 more');
  });
});

describe('BundleManager: a tool too deep to hash', () => {
  it("refuses only that tool, with a logged reason, and keeps the server's other tools", () => {
    const { lines, log } = captureLog();
    const m = new BundleManager({ ...echoUpstream(), log });
    type Schema = NonNullable<Tool['inputSchema']['properties']>[string];
    let schema: Schema = { type: 'string' };
    for (let i = 0; i < 10_000; i++) schema = { not: schema };
    m.register('evil', [tool('deep', { x: schema }), tool('echo')]);
    expect(m.current.reconciled.tools.map((t) => t.name)).toEqual(['echo']);
    expect(lines.find((l) => l.msg === 'bundle tool refused')).toMatchObject({
      level: 'warn',
      server: 'evil',
      tool: 'deep',
      reason: expect.stringMatching(/deeper than 64 levels/),
    });
    // A schema as deep as the bound is served.
    let ok: Schema = { type: 'string' };
    for (let i = 0; i < 50; i++) ok = { not: ok };
    m.register('evil', [tool('deep', { x: ok }), tool('echo')]);
    expect(m.current.reconciled.tools.map((t) => t.name)).toEqual(['deep', 'echo']);
  });
});

describe('createDispatcher (through the manager)', () => {
  it('routes to the original name with the arguments untouched', async () => {
    const seen: unknown[] = [];
    const m = new BundleManager({
      callUpstream: async (target, args) => {
        seen.push([target, args]);
        return ok('ok');
      },
    });
    m.register('a', [tool('x')]);
    m.register('b', [tool('x')]);
    await m.call('b__x', { q: 'hi', nested: { k: [1] } });
    expect(seen).toEqual([
      [
        { serverId: 'b', originalName: 'x' },
        { q: 'hi', nested: { k: [1] } },
      ],
    ]);
  });

  it('never rejects: missing server, upstream failure and non-Error throws become error results', async () => {
    const m = new BundleManager({
      callUpstream: async (target) => {
        if (target.serverId === 'down') throw new UpstreamUnavailableError('down');
        if (target.originalName === 'weird') throw 'a string';
        throw new Error('socket hang up');
      },
    });
    m.register('down', [tool('d')]);
    m.register('broken', [tool('b'), tool('weird')]);
    const d = await m.call('d');
    expect(d.isError).toBe(true);
    expect(textOf(d)).toContain('server "down" is not connected');
    expect(textOf(d)).toContain('Available tools: b, weird, d');
    const b = await m.call('b');
    expect(b).toEqual({ isError: true, content: [{ type: 'text', text: 'Tool "b" failed on server "broken": socket hang up' }] });
    expect(textOf(await m.call('weird'))).toContain('a string');
    const u = await m.call('nope');
    expect(textOf(u)).toBe('Unknown tool "nope". Available tools: b, weird, d.');
    const empty = new BundleManager(echoUpstream());
    expect(textOf(await empty.call('x'))).toBe('Unknown tool "x". Available tools: (none).');
  });
});

describe('reconnect backoff', () => {
  it('doubles from the initial delay and is capped', async () => {
    const { backoffDelay, DEFAULT_BACKOFF } = await import('./upstream.js');
    expect([0, 1, 2, 3, 4, 5, 6, 50].map((n) => backoffDelay(n, DEFAULT_BACKOFF))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000,
    ]);
  });
});
