/**
 * packages/union as the npm package it claims to be: its manifest (zod its only dependency,
 * as a peer; ESM with types; the server's license and engines), an explicit export list, a
 * tarball of built code and docs only, its tests run by the root suite, and the server
 * taking it through the workspace.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { packUnion, type PackResult } from '../helpers/npm.js';

const run = promisify(execFile);
const UNION = join(ROOT, 'packages/union');
type Manifest = Record<string, any>;
const union = JSON.parse(readFileSync(join(UNION, 'package.json'), 'utf8')) as Manifest;
const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const modules = readdirSync(join(UNION, 'src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

describe('packages/union', () => {
  let dir: string;
  let pack: PackResult;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'union-pack-'));
    pack = await packUnion(dir);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is an ESM package with types, zod its one dependency (a peer), MIT and the engines of the server', () => {
    expect(union.name).toBe('@notify-mcp/union');
    expect(union.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(union.type).toBe('module');
    expect(union.license).toBe('MIT');
    expect(union.engines).toEqual(root.engines);
    expect(union.dependencies).toBeUndefined();
    expect(Object.keys(union.peerDependencies)).toEqual(['zod']);
    expect(union.peerDependencies.zod).toMatch(/^\^4\./);
    // Its tests run on the zod the server ships.
    expect(union.devDependencies).toEqual({ zod: root.dependencies.zod });
    expect(Object.keys(union.exports)).toEqual(['.', './package.json']);
    expect(Object.keys(union.exports['.'])).toEqual(['types', 'default']);
    expect(union.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(readFileSync(join(UNION, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
  });

  it('exports an explicit list: index.ts names each export, re-exporting no module whole', () => {
    const index = readFileSync(join(UNION, 'src/index.ts'), 'utf8');
    expect(index).not.toMatch(/export \*/);
    const from = [...index.matchAll(/from '\.\/([a-z-]+)\.js'/g)].map((m) => `${m[1]}.ts`);
    expect(from.length).toBeGreaterThan(5);
    for (const file of from) expect(modules, file).toContain(file);
  });

  it('packs its built modules with their declarations, README, LICENSE and manifest; no sources, no tests', () => {
    const rest = pack.files.filter((f) => !f.startsWith('dist/'));
    expect(rest.sort()).toEqual(['LICENSE', 'README.md', 'package.json']);
    for (const m of modules) {
      const base = m.replace(/\.ts$/, '');
      expect(pack.files, m).toEqual(expect.arrayContaining([`dist/${base}.js`, `dist/${base}.d.ts`]));
    }
    expect(pack.files.filter((f) => /\.test\.|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('has its tests run by the root suite', async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'test/node_modules/vitest/vitest.mjs'), 'list', '--filesOnly', '--json'], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
    });
    const listed = (JSON.parse(stdout) as { file: string }[]).map((t) => t.file);
    const tests = readdirSync(join(UNION, 'src')).filter((f) => f.endsWith('.test.ts'));
    expect(tests.length).toBeGreaterThan(3);
    for (const t of tests) expect(listed, t).toContain(join(UNION, 'src', t));
  });

  it('is what the server depends on, through the workspace, and ships inside its tarball', () => {
    expect(root.workspaces).toEqual(['packages/union']);
    expect(root.dependencies['@notify-mcp/union']).toBe(union.version);
    expect(root.bundleDependencies).toEqual(['@notify-mcp/union']);
    expect(root.exports['./union']).toBe('./dist/union.js');
    expect(readFileSync(join(ROOT, 'src/union.ts'), 'utf8')).toMatch(/^export \* from '@notify-mcp\/union';$/m);
  });
});
