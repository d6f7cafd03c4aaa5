/**
 * The layering, checked on the source: the import rules of .dependency-cruiser.cjs (no
 * cycle, no upward import, the MCP SDK only in the binding, a use case taking store ports
 * and never an engine, core a leaf, the union package
 * only zod and node and taken by its name), shown to catch each kind on a small tree; then
 * what an import graph cannot say: the union package knows nothing of notifications, a
 * channel is named only in its own folder and the registry, only config reads the
 * environment, only the CLI writes stdout. Plus the package's export map, as a user imports
 * it (after the build).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { cruise, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';
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

/** Every rule broken under `root`/src and its union package, one line each: rule, importer, imported (or the cycle). */
async function violations(root: string): Promise<string[]> {
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
    const result = await cruise(
      ['src', 'packages/union/src'].filter((dir) => existsSync(dir)),
      { ...options, outputType: 'json' },
      {},
      { tsConfig: extractTSConfig(join(root, 'tsconfig.json')) },
    );
    const { summary } = JSON.parse(String(result.output)) as { summary: { violations: IViolation[] } };
    // A package resolves from the repository's node_modules: named the same from any tree.
    const name = (path: string) => path.replace(/^(\.\.\/)+(?=node_modules\/)/, '');
    return summary.violations
      .map((v) => `${v.rule.name}: ${v.from} -> ${v.cycle ? v.cycle.map((c) => c.name).join(' -> ') : name(v.to)}`)
      .sort();
  } finally {
    process.chdir(cwd);
  }
}

describe('import rules (dependency-cruiser)', () => {
  it('hold on src/ and packages/union: no cycle, no upward import (type-only ones included), the SDK only in the binding, core a leaf', async () => {
    expect(await violations(ROOT)).toEqual([]);
  });

  describe('catch each kind they forbid', () => {
    // Inside the repository, so that packages resolve from its node_modules.
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    const root = mkdtempSync(join(ROOT, '.tmp', 'arch-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      'src/core/errors.ts': 'export class E extends Error {}\n',
      'src/core/up.ts': "import type { B } from '../mcp/b.js';\nexport type A = B;\n",
      'src/mcp/b.ts': 'export type B = string;\n',
      'src/channels/c1.ts': "import { d } from './c2.js';\nexport const c = (): unknown => d;\n",
      'src/channels/c2.ts': "import { c } from './c1.js';\nexport const d = (): unknown => c;\n",
      'src/notification/sdk.ts': "import type { Tool } from '@modelcontextprotocol/server';\nexport type T = Tool;\n",
      'packages/union/src/u.ts': "import { E } from '../../../src/core/errors.js';\nexport const u = E;\n",
      'src/mcp/deep.ts': "export { u } from '../../packages/union/src/u.js';\n",
      'src/elsewhere/x.ts': "export { E } from '../core/errors.js';\n",
      'src/elsewhere/y.ts': 'export const y = 1;\n',
      'src/policy/z.ts': "export { y } from '../elsewhere/y.js';\n",
      'src/store/sqlite/store.ts': 'export type S = number;\n',
      'src/notification/engine.ts': "import type { S } from '../store/sqlite/store.js';\nexport type N = S;\n",
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }

    it('an upward import (type only), a cycle, the SDK in the domain, an engine in a use case, core and the union importing ours, the union by path, a file in no layer', async () => {
      expect(await violations(root)).toEqual([
        'core-is-a-leaf: src/core/up.ts -> src/mcp/b.ts',
        'domain-takes-store-ports: src/notification/engine.ts -> src/store/sqlite/store.ts',
        'layer-core: src/core/up.ts -> src/mcp/b.ts',
        'layer-every-file: src/elsewhere/x.ts -> src/core/errors.ts',
        'layer-every-file: src/policy/z.ts -> src/elsewhere/y.ts',
        'mcp-sdk-only-in-binding: src/notification/sdk.ts -> node_modules/@modelcontextprotocol/server/dist/index.d.mts',
        'no-cycle: src/channels/c1.ts -> src/channels/c2.ts -> src/channels/c1.ts',
        'union-by-its-name: src/mcp/deep.ts -> packages/union/src/u.ts',
        'union-only-zod-and-node: packages/union/src/u.ts -> src/core/errors.ts',
      ]);
    });
  });
});

const importsOf = (text: string) =>
  [...text.matchAll(/from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!);

describe('layering', () => {
  it('the union package imports nothing outside itself but zod and node', () => {
    expect(sources('packages/union/src').length).toBeGreaterThan(10);
    for (const { file, text } of sources('packages/union/src')) {
      for (const spec of importsOf(text))
        expect(spec.startsWith('./') || spec === 'zod' || spec.startsWith('node:'), `${file}: ${spec}`).toBe(true);
      expect(text, file).not.toMatch(/\b(email|sms|slack|notification)\b/i);
    }
  });

  it('providers know nothing of MCP, the union or the pipeline', () => {
    for (const { file, text } of sources('src/providers')) {
      for (const spec of importsOf(text)) {
        expect(spec, file).not.toMatch(/modelcontextprotocol|\/union\/|\/notification\/|\/mcp\/|\/server|\/catalog/);
      }
    }
  });

  it('channel modules know nothing of MCP, the pipeline or the server', () => {
    for (const { file, text } of sources('src/channels')) {
      for (const spec of importsOf(text)) {
        expect(spec, file).not.toMatch(/modelcontextprotocol|\/notification\/|\/mcp\/|\/server|\/catalog|\/transports\/|\/config\//);
      }
    }
  });

  it('a channel is named in code only in its own folder and the registry (a new channel touches nothing else)', () => {
    const code = (text: string) => text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '');
    for (const { name } of CHANNELS) {
      // A quoted name, its tool, a property or key of that name: a hard-coded channel list.
      const named = new RegExp(`(['"\`])${name}\\1|send_${name}\\b|\\.${name}\\b|\\b${name}\\s*:`);
      const outside = sources('src').filter(({ file }) => !file.startsWith(`src/channels/${name}/`) && file !== 'src/channels/registry.ts');
      for (const { file, text } of outside) expect(code(text), `${file} names ${name}`).not.toMatch(named);
    }
  });

  it('only src/config/environment.ts reads process.env (the union package not at all)', () => {
    const readers = [...sources('src'), ...sources('packages/union/src')].filter(({ text }) =>
      /process\.env/.test(text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '')),
    );
    expect(readers.map((r) => r.file)).toEqual(['src/config/environment.ts']);
  });

  it('nothing in src or the union package writes to stdout but the CLI', () => {
    const writers = [...sources('src'), ...sources('packages/union/src')].filter(({ text }) =>
      /console\.(log|info|debug)\(|process\.stdout\.write/.test(text),
    );
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

  it('notify-mcp/union is the union package, whole: the same exports, the same functions', async () => {
    const union = await import('notify-mcp/union');
    const pkg = await import('@notify-mcp/union');
    expect(Object.keys(union).sort()).toEqual(Object.keys(pkg).sort());
    expect(Object.keys(pkg).length).toBeGreaterThan(20);
    expect(union.defineUnion).toBe(pkg.defineUnion);
  });
});
