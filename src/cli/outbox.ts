/**
 * `notify-mcp outbox [--limit N]`: the latest delivery records, one JSON line each;
 * `--waiting`: the sends waiting for their time (scheduled, held, being released), soonest first.
 */
import { ConfigError, type Config } from '../config/config.js';
import type { Logger } from '../core/log.js';
import { openStore } from '../store/index.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function outboxCommand(config: Config, log: Logger, limitArg: string | undefined, out: (text: string) => void, waiting = false): Promise<number> {
  const limit = Number(limitArg ?? 20);
  // Safe integers only: 1e99 is an integer to JavaScript and a datatype mismatch to SQLite.
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new ConfigError('--limit must be a positive integer, e.g. --limit 50');
  // A reader: a mistyped NOTIFY_DATA_DIR is said, not answered with a new empty store.
  const store = await openStore(config, log, { existing: true });
  try {
    if (waiting) {
      for (const e of await store.listOutbox(['scheduled', 'held', 'releasing'], limit)) {
        out(JSON.stringify({ id: e.id, via: e.via, client: e.client, state: e.state, send_at: iso(e.send_at), due_at: iso(e.due_at), created_at: iso(e.created_at) }));
      }
      return 0;
    }
    for (const record of await store.listDeliveries(limit)) {
      out(JSON.stringify({ ...record, created_at: new Date(record.created_at).toISOString() }));
    }
  } finally {
    await store.close();
  }
  return 0;
}
