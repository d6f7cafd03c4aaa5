/**
 * The provider specs the Prism suites run on are the repository's own (vendored, unmodified,
 * with their licenses and provenance), and the suites that need a service or the specs say
 * so when they skip, and fail under CI=true instead of passing green.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { postgresSkipReason } from '../helpers/postgres.js';
import { prismMissing, prismUnavailableReason, repoRoot, specsDir } from '../helpers/prism.js';

describe('vendored provider specs', () => {
  it('are in test/fixtures/provider-specs with their licenses and a provenance row each', () => {
    expect(specsDir).toBe(path.join(repoRoot, 'test/fixtures/provider-specs'));
    expect(prismMissing()).toBeUndefined();
    const twilio = JSON.parse(readFileSync(path.join(specsDir, 'twilio_api_v2010.json'), 'utf8')) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(twilio.openapi).toBe('3.0.1');
    expect(Object.keys(twilio.paths)).toContain('/2010-04-01/Accounts/{AccountSid}/Messages.json');
    const slack = JSON.parse(readFileSync(path.join(specsDir, 'slack_web_openapi_v2.json'), 'utf8')) as {
      swagger: string;
      paths: Record<string, unknown>;
    };
    expect(slack.swagger).toBe('2.0');
    expect(Object.keys(slack.paths)).toContain('/chat.postMessage');
    for (const license of ['twilio-oai.LICENSE', 'slack-api-specs.LICENSE'])
      expect(readFileSync(path.join(specsDir, license), 'utf8')).toMatch(/MIT License/);
    const readme = readFileSync(path.join(specsDir, 'README.md'), 'utf8');
    expect(readme).toMatch(/twilio_api_v2010\.json.*d50069b44ea8cd23141385bdb6db48f16ff75bb5/);
    expect(readme).toMatch(/slack_web_openapi_v2\.json.*bc08db49625630e3585bf2f1322128ea04f2a7f3/);
  });

  it('nothing in the code, tests, tooling or CI points at a shared/ folder beside the repository', () => {
    const files = execFileSync('git', ['ls-files', 'src', 'test', 'bench', 'soak', 'examples', '.ci', 'package.json', 'vitest.config.ts'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f && !/\.(png|json)$/.test(f) && f !== 'test/providers/specs.test.ts');
    const pointing = files.filter((f) => /\.\.\/shared|shared\/provider-specs/.test(readFileSync(path.join(repoRoot, f), 'utf8')));
    expect(pointing).toEqual([]);
  });
});

describe('a suite whose service or specs are missing', () => {
  it('Prism: skips with a note on stderr, and fails under CI=true', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const missing = prismMissing('/nonexistent/specs');
      expect(missing).toMatch(/missing from \/nonexistent\/specs/);
      expect(prismUnavailableReason({}, missing)).toBe(missing);
      expect(String(write.mock.calls.at(-1)?.[0])).toMatch(/SKIPPED: the vendor specs/);
      expect(() => prismUnavailableReason({ CI: 'true' }, missing)).toThrow(/cannot run in CI/);
      expect(prismUnavailableReason({ CI: 'true' }, undefined)).toBeUndefined();
    } finally {
      write.mockRestore();
    }
  });

  it('PostgreSQL: skips with a note on stderr, and fails under CI=true or with DATABASE_URL set', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const down = async () => 'connect ECONNREFUSED 127.0.0.1:5432';
    try {
      expect(await postgresSkipReason('demo', {}, down)).toMatch(/does not answer/);
      expect(String(write.mock.calls.at(-1)?.[0])).toMatch(/demo: SKIPPED/);
      await expect(postgresSkipReason('demo', { CI: 'true' }, down)).rejects.toThrow(/in CI, which must start it/);
      await expect(postgresSkipReason('demo', { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' }, down)).rejects.toThrow(/DATABASE_URL is set/);
      expect(await postgresSkipReason('demo', { CI: 'true' }, async () => null)).toBeNull();
    } finally {
      write.mockRestore();
    }
  });
});
