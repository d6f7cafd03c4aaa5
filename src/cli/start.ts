#!/usr/bin/env node
/**
 * The `notify-mcp` entry (dist/cli.js): for a stdio start, the early reader answers the
 * opening `server/discover` and `initialize` while the rest of the command loads
 * (src/transports/stdio/early-reader.ts); then the command runs (main.ts). It imports only
 * node and the early reader, so that its answer comes as soon as node is up.
 */
import { readFileSync } from 'node:fs';
import { startEarlyReader, type EarlyAnswers } from '../transports/stdio/early-reader.js';

/** `notify-mcp` alone, or with `--env-file`: every other form is another command or serves HTTP. */
function servesStdio(argv: string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--env-file' && i + 1 < argv.length) i++;
    else if (!arg.startsWith('--env-file=')) return false;
  }
  return true;
}

/** Recorded by the build beside dist/cli.js (scripts/early-answers.mjs); without them the SDK answers alone. */
function recordedAnswers(): EarlyAnswers | undefined {
  try {
    return JSON.parse(readFileSync(new URL('./early-answers.json', import.meta.url), 'utf8')) as EarlyAnswers;
  } catch {
    return undefined;
  }
}

if (servesStdio(process.argv.slice(2))) {
  const answers = recordedAnswers();
  if (answers) startEarlyReader(process.stdin, process.stdout, answers);
}
// Not awaited: main's chunk imports the early reader from this module, which must have finished evaluating.
import('./main.js').catch((err: unknown) => {
  process.stderr.write(`notify-mcp: could not load: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
