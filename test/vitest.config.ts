/**
 * The suite's vitest configuration. It lives in test/, beside the package that installs the
 * test tools (test/package.json), because the server's own install (`npm ci` at the root) has
 * none of them: `vitest/config` resolves from here. The root is the repository, so the unit
 * tests beside the code (src/, packages/union/src/) run too; their imports of test tools
 * resolve from test/ through the plugin below, everything else from the repository root.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitest/config';
import { packageOf, TEST_PACKAGES } from './packages.mjs';

const TEST = fileURLToPath(new URL('.', import.meta.url));
const ROOT = join(TEST, '..');

/**
 * A bare import from the project's own files resolves from test/ when test/package.json
 * declares the package, else from the repository root. The root rule matters as much: a test
 * tool may bring its own copy of a server dependency (zod) into test/node_modules, and a test
 * must get the copy the server uses.
 */
function testPackages(): Plugin {
  return {
    name: 'notify-mcp:test-packages',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      const name = packageOf(source);
      if (name === undefined || importer === undefined || importer.includes('/node_modules/')) return null;
      const from = join(TEST_PACKAGES.has(name) ? TEST : ROOT, 'package.json');
      return this.resolve(source, from, { ...options, skipSelf: true });
    },
  };
}

export default defineConfig({
  root: ROOT,
  plugins: [testPackages()],
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/src/**/*.test.ts'],
    // vitest's default, one worker fewer than cores, runs the suite one file at a time on a
    // 2-core machine; most files wait on child processes and timers, so two workers there
    // halve the wall time and stay within the CPU (bench/results.md, issue 27).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', join(TEST, 'helpers/summary-reporter.ts')],
  },
});
