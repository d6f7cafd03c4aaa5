/**
 * Screenshots compared with committed baselines (test/browser/__screenshots__), with a
 * tolerance: font rasterising differs a little between machines, a layout change does not
 * stay under it. UPDATE_SCREENSHOTS=1 rewrites the baselines instead of comparing.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';

export const SCREENSHOT_DIR = join(import.meta.dirname, '__screenshots__');
export const UPDATING = process.env.UPDATE_SCREENSHOTS === '1';
/** At most this share of pixels may differ (after pixelmatch's per-pixel threshold). */
export const MAX_DIFF_RATIO = 0.01;

export interface Comparison {
  baseline: string;
  diffPixels: number;
  ratio: number;
  /** Where the diff image was written when the comparison failed. */
  diffPath?: string;
}

export function compareWithBaseline(name: string, png: Buffer): Comparison {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const baseline = join(SCREENSHOT_DIR, `${name}.png`);
  if (UPDATING || !existsSync(baseline)) {
    if (!UPDATING) throw new Error(`no baseline ${baseline}: run with UPDATE_SCREENSHOTS=1 to create it, then commit it`);
    writeFileSync(baseline, png);
    return { baseline, diffPixels: 0, ratio: 0 };
  }
  const expected = PNG.sync.read(readFileSync(baseline));
  const actual = PNG.sync.read(png);
  if (expected.width !== actual.width || expected.height !== actual.height) {
    throw new Error(`${name}: ${actual.width}x${actual.height}, baseline ${expected.width}x${expected.height}`);
  }
  const diff = new PNG({ width: actual.width, height: actual.height });
  const diffPixels = pixelmatch(expected.data, actual.data, diff.data, actual.width, actual.height, { threshold: 0.1 });
  const ratio = diffPixels / (actual.width * actual.height);
  if (ratio <= MAX_DIFF_RATIO) return { baseline, diffPixels, ratio };
  const diffPath = join(SCREENSHOT_DIR, `${name}.diff.png`);
  writeFileSync(diffPath, PNG.sync.write(diff));
  writeFileSync(join(SCREENSHOT_DIR, `${name}.actual.png`), png);
  return { baseline, diffPixels, ratio, diffPath };
}
