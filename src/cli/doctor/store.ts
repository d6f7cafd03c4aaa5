/** The store line of `notify-mcp doctor`: it opens, and its migrations are current; nothing is created or migrated. */
import type { Config } from '../../config/config.js';
import { inspectStore } from '../../store/inspect.js';
import { fail, pass, type Check } from '../../core/check.js';

export async function storeCheck(config: Config, timeoutMs: number): Promise<Check> {
  let state;
  try {
    state = await inspectStore(config, timeoutMs);
  } catch (err) {
    const where = config.databaseUrl ? 'PostgreSQL at DATABASE_URL' : `the SQLite store under ${config.dataDir}`;
    const fix = config.databaseUrl
      ? 'check the host, port, database and credentials in DATABASE_URL, and that this machine can reach it'
      : 'check that NOTIFY_DATA_DIR is readable by this user';
    return fail('store', `${where} could not be read: ${(err as Error).message}`, fix);
  }
  if (state.version === null) {
    return pass('store', `no SQLite store yet at ${state.where}; the server creates it at start (doctor creates nothing)`);
  }
  if (state.version > state.latest) {
    return fail(
      'store',
      `${state.kind} ${state.where} is at schema version ${state.version}, newer than this build (${state.latest})`,
      'upgrade notify-mcp to the version that wrote it',
    );
  }
  if (state.version < state.latest) {
    return fail(
      'store',
      `${state.kind} ${state.where} is at schema version ${state.version} of ${state.latest}`,
      'start notify-mcp once: it applies the missing migrations at start',
    );
  }
  return pass('store', `${state.kind} ${state.where} opens; migrations current (version ${state.version})`);
}
