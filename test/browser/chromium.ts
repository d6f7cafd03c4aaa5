/**
 * Debian's Chromium driven by playwright-core (no browser download: this network allows
 * none). Absent on a developer's machine, the browser suites skip and say how to install
 * it; in CI (CI=true) they fail instead, since .ci/run installs it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const chromiumMissing = !existsSync(CHROMIUM);
export const MISSING_MESSAGE = `browser tests skipped: ${CHROMIUM} is missing. Install it with \`apt-get install -y chromium\` (Debian) to run them.`;

/** True when the suite should skip; throws in CI, where a missing browser is a broken setup. */
export function skipWithoutChromium(): boolean {
  if (!chromiumMissing) return false;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing in CI: .ci/run installs it (apt-get install -y chromium)`);
  process.stderr.write(`${MISSING_MESSAGE}\n`);
  return true;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
}
