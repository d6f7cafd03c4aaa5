/**
 * Every property test runs through test/helpers/property.ts, so that CI always uses the
 * fixed seed and a failure always prints the seed that replays it (issue 16).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

it("no test calls fast-check's assert or check directly", () => {
  const offenders = ['src', 'test']
    .flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
    // test/ holds the test tools' own install (test/package.json): their files are not ours.
    .filter((file) => !file.split(/[\\/]/).includes('node_modules'))
    .filter((file) => !file.endsWith(join('helpers', 'property.ts')))
    .filter((file) => /\bfc\.(assert|check)\(/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(ROOT, file));
  expect(offenders).toEqual([]);
});
