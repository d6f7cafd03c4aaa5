/**
 * Installs the test tools (test/package.json, pinned by test/package-lock.json) into
 * test/node_modules, apart from the server's install: `npm test` runs it first. Skips the
 * install when test/node_modules already holds this lockfile's packages, so a second
 * `npm test` does not reinstall. Node built-ins only: nothing else is installed yet.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const lock = readFileSync(new URL('./package-lock.json', import.meta.url));
const stamp = new URL('./node_modules/.installed-lock-sha256', import.meta.url);
const want = createHash('sha256').update(lock).digest('hex');

if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) process.exit(0);
const started = Date.now();
// --loglevel=error: the EBADENGINE notes of test tools' own dependencies (they run on Node 20)
// would read like failures at the top of a test run.
const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
if (r.status !== 0) {
  process.stderr.write(`test tools: npm ci in test/ failed (exit ${r.status ?? r.signal})\n`);
  process.exit(1);
}
writeFileSync(stamp, want);
const count = Object.keys(JSON.parse(lock.toString()).packages).length - 1;
process.stderr.write(
  `test tools: ${count} packages installed into test/node_modules from test/package-lock.json in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);
