/**
 * npm as a user runs it, from tests: `npm pack` of the built package, and an npm
 * configuration for installs into throwaway directories. Installs read the machine's npm
 * cache (CI filled it with `npm ci`; the registry is asked only for what it lacks) while
 * everything they write outside it, npx's `_npx/` install folders included, stays in a
 * temporary directory that the test removes.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './cli.js';

const run = promisify(execFile);

export interface PackResult {
  tarball: string;
  files: string[];
  size: number;
  /** Packages the tarball carries in its own node_modules (bundleDependencies). */
  bundled: string[];
}

/** `npm pack` of the current dist/ (built by `npm test`; `prepare` is not run again). */
export async function packBuilt(destination: string): Promise<PackResult> {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  const [info] = JSON.parse(stdout) as [{ filename: string; size: number; files: { path: string }[]; bundled?: string[] }];
  return { tarball: join(destination, info.filename), files: info.files.map((f) => f.path), size: info.size, bundled: info.bundled ?? [] };
}

/** `npm pack` of the built union package (packages/union/dist, built first by `npm run build`). */
export async function packUnion(destination: string): Promise<PackResult> {
  const dir = join(ROOT, 'packages/union');
  if (!existsSync(join(dir, 'dist/index.js'))) throw new Error('packages/union/dist is missing: run `npm run build` first');
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
    cwd: dir,
    maxBuffer: 16 << 20,
  });
  const [info] = JSON.parse(stdout) as [{ filename: string; size: number; files: { path: string }[]; bundled?: string[] }];
  return { tarball: join(destination, info.filename), files: info.files.map((f) => f.path), size: info.size, bundled: info.bundled ?? [] };
}

/**
 * Environment for npm/npx runs under `dir`: a cache of its own whose content store is the
 * machine's (so packages come from it, offline when they are all there), install scripts off
 * unless asked for (the one dependency with a script, better-sqlite3, compiles SQLite from
 * source when no prebuilt binary can be downloaded: about 3 minutes here).
 */
export async function npmEnv(dir: string, options: { scripts?: boolean } = {}): Promise<Record<string, string>> {
  const { stdout } = await run('npm', ['config', 'get', 'cache']);
  const cache = join(dir, 'npm-cache');
  mkdirSync(cache, { recursive: true });
  symlinkSync(join(stdout.trim(), '_cacache'), join(cache, '_cacache'));
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    npm_config_cache: cache,
    npm_config_prefer_offline: 'true',
    npm_config_ignore_scripts: options.scripts ? 'false' : 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}
