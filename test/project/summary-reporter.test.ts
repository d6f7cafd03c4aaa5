/**
 * The CI summary line never says less than vitest's exit status (issue 16): vitest runs on
 * fixture files with the real reporter, and the printed line is checked against the exit
 * code. Tests whose beforeAll threw used to count as skipped, and unhandled errors as
 * nothing, so a failed run printed "0 failed".
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const FIXTURES = join(ROOT, 'test/fixtures/summary');

function runFixture(name: string): { status: number | null; passed: number; failed: number; skipped: number; stdout: string } {
  // The outer run's worker variables would make the inner vitest think it is a worker.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS' && k !== 'TEST'),
  );
  const run = spawnSync(
    process.execPath,
    [
      join(ROOT, 'test/node_modules/vitest/vitest.mjs'),
      'run',
      '--root',
      FIXTURES,
      `--reporter=${join(ROOT, 'test/helpers/summary-reporter.ts')}`,
      `${name}.fixture.ts`,
    ],
    { cwd: FIXTURES, env, encoding: 'utf8', timeout: 60_000 },
  );
  const line = /^vitest: (\d+) passed, (\d+) failed, (\d+) skipped$/m.exec(run.stdout);
  if (!line) throw new Error(`no summary line (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
  return { status: run.status, passed: Number(line[1]), failed: Number(line[2]), skipped: Number(line[3]), stdout: run.stdout };
}

describe('summary line', () => {
  it('counts the tests a throwing beforeAll kept from running as failed, not skipped', () => {
    const r = runFixture('before-all');
    expect(r.status).not.toBe(0);
    expect(r).toMatchObject({ passed: 1, failed: 2, skipped: 1 });
  });

  it('counts an unhandled rejection as a failure', () => {
    const r = runFixture('unhandled');
    expect(r.status).not.toBe(0);
    expect(r).toMatchObject({ passed: 1, failed: 1, skipped: 0 });
    expect(r.stdout).toContain('1 of the failures happened outside tests');
  });

  it('counts an afterAll that threw, and a file that failed to load', () => {
    const after = runFixture('after-all');
    expect(after.status).not.toBe(0);
    expect(after).toMatchObject({ passed: 1, failed: 1 });
    const load = runFixture('import-error');
    expect(load.status).not.toBe(0);
    expect(load.failed).toBe(1);
  });

  it('says 0 failed exactly when vitest exits 0', () => {
    const green = runFixture('green');
    expect(green).toMatchObject({ status: 0, passed: 1, failed: 0, skipped: 1 });
  });
});
