/**
 * The npm package as a user gets it: `npm pack` carries the built CLI, README, LICENSE and
 * .env.example and no tests, with the union package inside it (bundleDependencies: it is a
 * workspace package, not one the registry has); from a clean directory, `npx --package=./notify-mcp-*.tgz
 * notify-mcp --version` installs it with its dependencies and runs the packed dist/cli.js
 * (the rolldown single file and its lazy chunks) against the package's own dependencies.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { npmEnv, packBuilt, type PackResult } from '../helpers/npm.js';

const run = promisify(execFile);
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; license: string };

describe('the npm package', () => {
  let dir: string;
  let pack: PackResult;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'notify-pack-'));
    pack = await packBuilt(dir);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('carries README, LICENSE (MIT, as package.json says), .env.example and the build, and no tests', () => {
    expect(pack.files).toEqual(
      expect.arrayContaining([
        'README.md',
        'LICENSE',
        '.env.example',
        'package.json',
        'dist/cli.js',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/union.js',
        'dist/union.d.ts',
        'dist/bundling/index.js',
      ]),
    );
    expect(pack.files.some((f) => f.startsWith('dist/cli-chunks/'))).toBe(true);
    const strays = pack.files.filter(
      (f) =>
        /(^|\/)(test|tests|__toolsnaps__|fixtures|src)\//.test(f) ||
        /\.(test|spec)\.|\.property\./.test(f) ||
        !/^(node_modules\/@notify-mcp\/union\/)?(dist\/|README\.md$|LICENSE$|\.env\.example$|package\.json$)/.test(f),
    );
    expect(strays).toEqual([]);
    // The one bundled package is the union, as its own tarball holds it.
    expect(pack.bundled).toEqual(['@notify-mcp/union']);
    const union = pack.files.filter((f) => f.startsWith('node_modules/')).map((f) => f.slice('node_modules/@notify-mcp/union/'.length));
    expect(union).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/validate.js']),
    );
    expect(manifest.license).toBe('MIT');
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} notify-mcp contributors\n/);
  });

  it('runs from a clean directory: npx --package=./notify-mcp-<version>.tgz notify-mcp --version', { timeout: 300_000 }, async () => {
    const work = join(dir, 'clean');
    const env = await npmEnv(dir);
    mkdirSync(work);
    copyFileSync(pack.tarball, join(work, basename(pack.tarball)));
    const started = Date.now();
    const { stdout } = await run('npx', ['--yes', `--package=./${basename(pack.tarball)}`, 'notify-mcp', '--version'], {
      cwd: work,
      env,
      timeout: 280_000,
    });
    process.stderr.write(`package: npx install of the tarball and --version took ${Date.now() - started} ms\n`);
    expect(stdout.trim()).toBe(manifest.version);

    // The installed copy: npx's folder under our cache, the package as its dependency.
    const npx = join(env.npm_config_cache!, '_npx');
    const [installDir] = readdirSync(npx);
    const pkg = join(npx, installDir!, 'node_modules', 'notify-mcp');
    expect(readFileSync(join(pkg, 'dist/cli.js'), 'utf8')).toBe(readFileSync(join(ROOT, 'dist/cli.js'), 'utf8'));
    const cli = join(pkg, 'dist/cli.js');
    const cleanEnv = { PATH: env.PATH!, HOME: dir };

    // --help names the .env.example that came with the package, and it is there.
    const help = (await run(process.execPath, [cli, '--help'], { env: cleanEnv })).stdout;
    const example = /^\s+(\/\S+\.env\.example)$/m.exec(help)?.[1];
    expect(example).toBe(join(pkg, '.env.example'));
    expect(readFileSync(example!, 'utf8')).toBe(readFileSync(join(ROOT, '.env.example'), 'utf8'));

    // `schema` builds every tool from the packed bundle with the package's own dependencies
    // (zod, the MCP SDK), none of this checkout's.
    const schema = JSON.parse((await run(process.execPath, [cli, 'schema'], { env: cleanEnv, cwd: work })).stdout) as {
      tools: { name: string }[];
    };
    expect(schema.tools.map((t) => t.name)).toContain('send_notification');
    expect(existsSync(join(npx, installDir!, 'node_modules', 'zod'))).toBe(true);

    // notify-mcp/union resolves, in the installed copy, to the union it carried.
    const probe = "import('notify-mcp/union').then((u) => process.stdout.write(typeof u.defineUnion + ' ' + u.schemaHash({ a: 1 })))";
    const union = (await run(process.execPath, ['--input-type=module', '-e', probe], { env: cleanEnv, cwd: join(npx, installDir!) }))
      .stdout;
    expect(union).toMatch(/^function [0-9a-f]+$/);
    expect(existsSync(join(pkg, 'node_modules/@notify-mcp/union/dist/index.js'))).toBe(true);
  });
});
