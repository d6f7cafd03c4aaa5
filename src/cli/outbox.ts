/**
 * `notify-mcp outbox [--limit N]`: the latest delivery records, one JSON line each;
 * `--waiting`: the sends waiting for their time (scheduled, held, being released), soonest first.
 * An empty answer is said on `note` (stderr), so stdout stays JSON lines for `| jq`.
 */
import { ConfigError, type Config } from '../config/config.js';
import type { Logger } from '../core/log.js';
import { openStore } from '../store/index.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function outboxCommand(
  config: Config,
  log: Logger,
  limitArg: string | undefined,
  out: (text: string) => void,
  waiting = false,
  note: (text: string) => void = (text) => process.stderr.write(`${text}\n`),
): Promise<number> {
  const limit = Number(limitArg ?? 20);
  // Safe integers only: 1e99 is an integer to JavaScript and a datatype mismatch to SQLite.
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new ConfigError('--limit must be a positive integer, e.g. --limit 50');
  // A reader: a mistyped NOTIFY_DATA_DIR is said, not answered with a new empty store.
  const store = await openStore(config, log, { existing: true });
  try {
    if (waiting) {
      const entries = await store.listOutbox(['scheduled', 'held', 'releasing'], limit);
      for (const e of entries) {
        out(
          JSON.stringify({
            id: e.id,
            via: e.via,
            client: e.client,
            state: e.state,
            send_at: iso(e.send_at),
            due_at: iso(e.due_at),
            created_at: iso(e.created_at),
          }),
        );
      }
      if (entries.length === 0) note('notify-mcp: nothing is waiting (no scheduled or held sends)');
      return 0;
    }
    const records = await store.listDeliveries(limit);
    for (const record of records) {
      out(JSON.stringify({ ...record, created_at: new Date(record.created_at).toISOString() }));
    }
    if (records.length === 0) note('notify-mcp: no delivery records yet');
  } finally {
    await store.close();
  }
  return 0;
}
