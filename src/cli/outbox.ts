/** `notify-mcp outbox [--limit N]`: the latest delivery records, one JSON line each. */
import { ConfigError, type Config } from '../config/config.js';
import type { Logger } from '../core/log.js';
import { openStore } from '../store/index.js';

export async function outboxCommand(config: Config, log: Logger, limitArg: string | undefined, out: (text: string) => void): Promise<number> {
  const limit = Number(limitArg ?? 20);
  // Safe integers only: 1e99 is an integer to JavaScript and a datatype mismatch to SQLite.
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new ConfigError('--limit must be a positive integer, e.g. --limit 50');
  // A reader: a mistyped NOTIFY_DATA_DIR is said, not answered with a new empty store.
  const store = await openStore(config, log, { existing: true });
  try {
    for (const record of await store.listDeliveries(limit)) {
      out(JSON.stringify({ ...record, created_at: new Date(record.created_at).toISOString() }));
    }
  } finally {
    await store.close();
  }
  return 0;
}
