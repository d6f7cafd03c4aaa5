/**
 * The only reader of process.env, kept apart from config.ts so that the stdio entry
 * (src/cli/start.ts) can ask it before the rest of the server loads.
 */
import { parseEnv } from 'node:util';
import { readConfigFile } from './config-file.js';
import { ConfigError, type Env } from '../core/env.js';
import { unstorableIn } from '../core/storable-text.js';

/** A .env file is a few kilobytes; this bounds what a wrong path can make us read. */
const MAX_ENV_FILE_BYTES = 1024 * 1024;

/**
 * The environment config reads: the process's, over a .env file's when one is named
 * (`--env-file`). A variable set in both keeps the process's value, as with Node's own
 * `--env-file`, so a one-off `VAR=x notify-mcp …` still wins.
 */
export function environment(envFile?: string): Env {
  if (envFile === undefined) return process.env;
  let text: string;
  try {
    text = readConfigFile(envFile, MAX_ENV_FILE_BYTES);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(
      `--env-file ${envFile}: cannot read it (${why}); copy .env.example to that path and fill it in, or drop --env-file`,
    );
  }
  const parsed = parseEnv(text);
  // The process environment cannot hold U+0000; a file can, and no variable means it.
  for (const [name, value] of Object.entries(parsed)) {
    const inName = unstorableIn(name);
    const inValue = unstorableIn(value ?? '');
    if (inName || inValue) {
      const where = inName ? `a variable's name holds ${inName}` : `the value of ${name} holds ${inValue}`;
      throw new ConfigError(`--env-file ${envFile}: ${where}, which this server cannot store or pass on; remove it from the file`);
    }
  }
  return { ...parsed, ...process.env };
}

/** What the stdio entry read (src/cli/start.ts), kept for main so that one start reads an --env-file once. */
let handedOver: { envFile: string | undefined; env: Env } | undefined;

/** The stdio entry's reading of the environment, for main's takeEnvironment. */
export function handOverEnvironment(envFile: string | undefined, env: Env): void {
  handedOver = { envFile, env };
}

/** The environment the entry read for this same --env-file, once; else a reading of its own. */
export function takeEnvironment(envFile?: string): Env {
  const taken = handedOver;
  handedOver = undefined;
  return taken !== undefined && taken.envFile === envFile ? taken.env : environment(envFile);
}

/**
 * Whether `env` changes what the server says to `server/discover` and `initialize`: the
 * instructions name only the tool groups NOTIFY_TOOLS offers. The build records those answers
 * for the default (scripts/early-answers.mjs); with anything else the SDK answers alone.
 */
export function changesServerAnswers(env: Env): boolean {
  return (env.NOTIFY_TOOLS ?? '').trim() !== '';
}
