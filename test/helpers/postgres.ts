/**
 * Which PostgreSQL the suites use, and whether they may skip. DATABASE_URL set means the
 * run asked for PostgreSQL: a server that does not answer then fails the suite, never skips
 * it. Unset, the local test server is tried, and a suite that finds none skips, saying so.
 */
import pg from 'pg';

// The test harness may read the environment; src/ may not (only src/config/config.ts does).
export const PG_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

async function probe(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Null when PostgreSQL answers; otherwise why a suite skips (reported on stderr). Throws
 * when DATABASE_URL is set or CI=true (CI starts PostgreSQL: a server that does not answer
 * there is a broken setup, never a green skip) and the server does not answer.
 */
export async function postgresSkipReason(
  suite: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  answer: () => Promise<string | null> = probe,
): Promise<string | null> {
  const unavailable = await answer();
  if (unavailable === null) return null;
  const where = PG_URL.replace(/:[^:@/]*@/, ':***@');
  if (env.DATABASE_URL) {
    throw new Error(
      `${suite}: DATABASE_URL is set but PostgreSQL at ${where} does not answer (${unavailable}); failing instead of skipping`,
    );
  }
  if (env.CI === 'true') {
    throw new Error(
      `${suite}: PostgreSQL at ${where} does not answer (${unavailable}) in CI, which must start it; failing instead of skipping`,
    );
  }
  // Said loudly: a skipped suite must not pass for a green one.
  const reason = `PostgreSQL at ${where} does not answer (${unavailable}); set DATABASE_URL to require it`;
  process.stderr.write(`${suite}: SKIPPED, ${reason}\n`);
  return reason;
}

/**
 * A fresh schema for server processes to share, as the env that points them at it
 * (search_path in the URL); close() drops it.
 */
export async function sharedPostgresSchema(
  prefix: string,
): Promise<{ env: Record<string, string>; schema: string; close(): Promise<void> }> {
  const schema = `${prefix}_${Math.random().toString(16).slice(2, 14)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { DATABASE_URL: url.toString() },
    schema,
    async close() {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}
