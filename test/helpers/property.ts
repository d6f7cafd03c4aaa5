/**
 * How every property test runs. CI uses one fixed seed, so a run is reproducible and a
 * green run means the same inputs passed. `PROPERTY_EXPLORE=1` adds a second run on a
 * random seed, logged before it starts, to look for new failures. Any failure names its
 * seed and path and the command that replays it; a failure found once is then added to
 * the property's `examples`, so every later run checks it first (a regression case).
 *
 *   PROPERTY_SEED=<n> [PROPERTY_PATH=<p>]   replay one seed (and one counterexample)
 *   PROPERTY_EXPLORE=1                      also explore with a random, logged seed
 */
import fc from 'fast-check';

/** The seed CI runs with. */
export const FIXED_SEED = 1_611_2026;

export interface PropertyOptions<Ts> {
  numRuns: number;
  /** Inputs that once failed: run first, on every seed. */
  examples?: Ts[];
}

type AnyProperty<Ts> = fc.IRawProperty<Ts>;

export async function assertProperty<Ts>(name: string, property: AnyProperty<Ts>, options: PropertyOptions<Ts>): Promise<void> {
  const replaySeed = intFromEnv('PROPERTY_SEED');
  await runOnce(name, property, options, replaySeed ?? FIXED_SEED, process.env.PROPERTY_PATH);
  if (replaySeed === undefined && process.env.PROPERTY_EXPLORE === '1') {
    const seed = Math.floor(Math.random() * 0x7fffffff);
    process.stderr.write(`property "${name}": exploring with random seed ${seed} (replay: PROPERTY_SEED=${seed})\n`);
    await runOnce(name, property, options, seed, undefined);
  }
}

async function runOnce<Ts>(
  name: string,
  property: AnyProperty<Ts>,
  options: PropertyOptions<Ts>,
  seed: number,
  path: string | undefined,
): Promise<void> {
  const details = await fc.check(property, { seed, numRuns: options.numRuns, examples: options.examples ?? [], ...(path ? { path } : {}) });
  if (!details.failed) return;
  const replay = `PROPERTY_SEED=${seed} PROPERTY_PATH=${details.counterexamplePath ?? ''}`;
  const line = `property "${name}" failed with seed ${seed} (replay: ${replay} npm run vitest -- run <this file>)`;
  process.stderr.write(`${line}\n`);
  const cause = details.errorInstance;
  const why = cause instanceof Error ? (cause.stack ?? cause.message) : `${cause as string}`;
  throw new Error(`${line}\n${fc.defaultReportMessage(details) ?? ''}\n${why}`, { cause });
}

function intFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer seed, not ${JSON.stringify(raw)}`);
  return n;
}
