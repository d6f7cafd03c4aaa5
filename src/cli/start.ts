#!/usr/bin/env node
/**
 * The `notify-mcp` entry (dist/cli.js): for a stdio start, the early reader answers the
 * opening `server/discover` and `initialize` while the rest of the command loads
 * (src/transports/stdio/early-reader.ts); then the command runs (main.ts). It imports only
 * node, the environment and the early reader, so that its answer comes as soon as node is up.
 */
import { readFileSync } from 'node:fs';
import { changesServerAnswers, environment, handOverEnvironment } from '../config/environment.js';
import { startEarlyReader, type EarlyAnswers } from '../transports/stdio/early-reader.js';

/**
 * For `notify-mcp` alone, or with `--env-file`, the file named (null when none); undefined for
 * every other form, which is another command or serves HTTP.
 */
function stdioEnvFile(argv: string[]): string | null | undefined {
  let file: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--env-file' && i + 1 < argv.length) file = argv[++i]!;
    else if (arg.startsWith('--env-file=')) file = arg.slice('--env-file='.length);
    else return undefined;
  }
  return file;
}

/**
 * Whether the configuration leaves the recorded answers true. What was read goes to main, which
 * would read the same file again; an unreadable --env-file is main's to report.
 */
function answersHold(envFile: string | null): boolean {
  try {
    const env = environment(envFile ?? undefined);
    handOverEnvironment(envFile ?? undefined, env);
    return !changesServerAnswers(env);
  } catch {
    return false;
  }
}

/** Recorded by the build beside dist/cli.js (scripts/early-answers.mjs); without them the SDK answers alone. */
function recordedAnswers(): EarlyAnswers | undefined {
  try {
    return JSON.parse(readFileSync(new URL('./early-answers.json', import.meta.url), 'utf8')) as EarlyAnswers;
  } catch {
    return undefined;
  }
}

const envFile = stdioEnvFile(process.argv.slice(2));
if (envFile !== undefined && answersHold(envFile)) {
  const answers = recordedAnswers();
  if (answers) startEarlyReader(process.stdin, process.stdout, answers);
}
// Not awaited: main's chunk imports the early reader from this module, which must have finished evaluating.
import('./main.js').catch((err: unknown) => {
  process.stderr.write(`notify-mcp: could not load: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
