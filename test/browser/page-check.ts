/**
 * What every page test asks of a page as a person sees it: it fits the viewport (no sideways
 * scroll), passes axe, and looks like its committed baseline (./screenshots.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { compareWithBaseline } from './screenshots.js';

declare const document: { documentElement: { scrollWidth: number } };

const AXE = readFileSync(join(ROOT, 'test/node_modules/axe-core/axe.min.js'), 'utf8');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** axe's violations on the page. Pages allow no script; axe is injected by the driver, which CSP does not govern. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown): Promise<{ violations: { id: string }[] }> } }).axe;
    return (await axe.run((globalThis as unknown as { document: unknown }).document)).violations.map((v) => v.id);
  });
}

/** `name`: the baseline's; `mask`: what changes from run to run (ids, times); `clip`: only the top of the page. */
export async function expectPageLooksRight(
  page: Page,
  name: string,
  viewport: { width: number; height: number },
  { mask, fullPage = false, clipHeight }: { mask: Locator[]; fullPage?: boolean; clipHeight?: number },
): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name}: page width`).toBeLessThanOrEqual(viewport.width);
  expect(await axeViolations(page), `${name}: axe`).toEqual([]);
  const png = await page.screenshot({
    fullPage,
    ...(clipHeight ? { clip: { x: 0, y: 0, width: viewport.width, height: clipHeight } } : {}),
    animations: 'disabled',
    caret: 'hide',
    mask,
    maskColor: '#888888',
  });
  const result = compareWithBaseline(name, png);
  expect(result.diffPath, `${name}: ${(result.ratio * 100).toFixed(2)}% of pixels differ, see ${result.diffPath}`).toBeUndefined();
}
