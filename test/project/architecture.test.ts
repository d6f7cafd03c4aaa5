/**
 * The layering, checked on the source: the union library knows nothing of notifications,
 * the providers and channel modules nothing of MCP, a channel is named only in its own
 * folder and the registry, and only config.ts reads the environment. Plus the package's
 * export map, as a user imports it (after the build).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../src/channels/registry.js';
import { ROOT } from '../helpers/cli.js';

function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => {
      const file = join(e.parentPath, e.name);
      return { file: relative(ROOT, file), text: readFileSync(file, 'utf8') };
    });
}

const importsOf = (text: string) => [...text.matchAll(/from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!);

describe('layering', () => {
  it('the union library imports nothing outside itself but zod and node', () => {
    for (const { file, text } of sources('src/union')) {
      for (const spec of importsOf(text)) expect(spec.startsWith('./') || spec === 'zod' || spec.startsWith('node:'), `${file}: ${spec}`).toBe(true);
      expect(text, file).not.toMatch(/\b(email|sms|slack|notification)\b/i);
    }
  });

  it('providers know nothing of MCP, the union or the pipeline', () => {
    for (const { file, text } of sources('src/providers')) {
      for (const spec of importsOf(text)) {
        expect(spec, file).not.toMatch(/modelcontextprotocol|\/union\/|\/notification\/|\/server|\/catalog/);
      }
    }
  });

  it('channel modules know nothing of MCP, the pipeline or the server', () => {
    for (const { file, text } of sources('src/channels')) {
      for (const spec of importsOf(text)) {
        expect(spec, file).not.toMatch(/modelcontextprotocol|\/notification\/|\/server|\/catalog|\/transports\//);
      }
    }
  });

  it('a channel is named in code only in its own folder and the registry (a new channel touches nothing else)', () => {
    const code = (text: string) => text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '');
    for (const { name } of CHANNELS) {
      // A quoted name, its tool, a property or key of that name: a hard-coded channel list.
      const named = new RegExp(`(['"\`])${name}\\1|send_${name}\\b|\\.${name}\\b|\\b${name}\\s*:`);
      const outside = sources('src').filter(
        ({ file }) => !file.startsWith(`src/channels/${name}/`) && file !== 'src/channels/registry.ts',
      );
      for (const { file, text } of outside) expect(code(text), `${file} names ${name}`).not.toMatch(named);
    }
  });

  it('only src/config/config.ts reads process.env', () => {
    const readers = sources('src').filter(({ text }) => /process\.env/.test(text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '')));
    expect(readers.map((r) => r.file)).toEqual(['src/config/config.ts']);
  });

  it('nothing in src writes to stdout but the CLI', () => {
    const writers = sources('src').filter(({ text }) => /console\.(log|info|debug)\(|process\.stdout\.write/.test(text));
    expect(writers.map((w) => w.file)).toEqual(['src/cli/main.ts']);
  });
});

describe('package exports', () => {
  it('resolve to the built library parts', async () => {
    const main = await import('notify-mcp');
    const union = await import('notify-mcp/union');
    const bundling = await import('notify-mcp/bundling');
    expect(typeof main.createServer).toBe('function');
    expect(typeof union.defineUnion).toBe('function');
    expect(typeof bundling.reconcile).toBe('function');
    expect(bundling.schemaHash({ b: { d: 1, c: 2 }, a: 1 })).toBe(union.schemaHash({ a: 1, b: { c: 2, d: 1 } }));
  });
});
