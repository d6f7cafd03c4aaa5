/**
 * The length ratchet: no function in src/ or packages/union/src/ over 80 lines, no file over
 * 400, except those in lengths-baseline.json, which may shrink and never grow. A change that
 * shortens one lowers its entry (or removes it); a change that adds an offender or lengthens
 * one fails here, naming it. (Checked with the TypeScript compiler the build uses: no linter
 * package is needed for two counts.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_FILE_LINES, MAX_FUNCTION_LINES, measure, type Lengths } from './lengths.js';

const baseline = JSON.parse(readFileSync(new URL('./lengths-baseline.json', import.meta.url), 'utf8')) as Lengths;
const now = measure(process.cwd(), ['src', 'packages/union/src']);

function breaches(kind: 'functions' | 'files', max: number): string[] {
  return Object.entries(now[kind])
    .filter(([k, n]) => n > (baseline[kind][k] ?? max))
    .map(([k, n]) => `${k}: ${n} lines (allowed ${baseline[kind][k] ?? max})`);
}

function stale(kind: 'functions' | 'files'): string[] {
  return Object.entries(baseline[kind])
    .filter(([k, n]) => (now[kind][k] ?? 0) < n)
    .map(([k, n]) => `${k}: ${now[kind][k] ?? 'within the limit'} now, baseline ${n}`);
}

describe('function and file lengths', () => {
  it(`no function over ${MAX_FUNCTION_LINES} lines and no file over ${MAX_FILE_LINES}, beyond the baseline`, () => {
    expect([...breaches('functions', MAX_FUNCTION_LINES), ...breaches('files', MAX_FILE_LINES)]).toEqual([]);
  });

  it('the baseline follows every shortening down (lower or remove these entries in lengths-baseline.json)', () => {
    expect([...stale('functions'), ...stale('files')]).toEqual([]);
  });
});
