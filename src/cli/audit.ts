/**
 * `notify-mcp audit verify` checks the audit chain: exit 0 with the count (and the head's
 * hash, to keep elsewhere and compare with a later run), or exit 1 naming the first entry
 * changed, removed, inserted or reordered. `notify-mcp audit export [--since T] [--client C]`
 * writes the entries as JSON lines, oldest first, for a SIEM.
 */
import { ConfigError, type Config } from '../config/config.js';
import type { Logger } from '../core/log.js';
import { verifyAudit } from '../store/audit-verify.js';
import { openStore } from '../store/index.js';

const PAGE = 10_000;

export interface AuditArgs {
  since?: string;
  client?: string;
  json?: boolean;
}

/** An RFC 3339 time (or a date), as epoch ms. */
function sinceOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const at = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2}))?$/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(at))
    throw new ConfigError(
      `--since must be an RFC 3339 time or a date, e.g. --since 2026-12-01T00:00:00Z or --since 2026-12-01; got ${JSON.stringify(raw)}`,
    );
  return at;
}

export async function auditCommand(
  positionals: string[],
  args: AuditArgs,
  config: Config,
  log: Logger,
  out: (text: string) => void,
): Promise<number> {
  const [sub, ...rest] = positionals;
  if ((sub !== 'verify' && sub !== 'export') || rest.length > 0) {
    throw new ConfigError('use `notify-mcp audit verify` or `notify-mcp audit export [--since T] [--client C]`');
  }
  if (sub === 'verify' && (args.since !== undefined || args.client !== undefined))
    throw new ConfigError('audit verify checks the whole chain; --since and --client belong to audit export');
  const since = sinceOf(args.since);
  // A reader: a mistyped NOTIFY_DATA_DIR is said, not answered with a new empty store.
  const store = await openStore(config, log, { existing: true });
  try {
    if (sub === 'verify') {
      const v = await verifyAudit(store, PAGE);
      if (args.json) out(JSON.stringify(v));
      else if (v.ok) out(`audit chain intact: ${v.count} entries (seq ${v.head.anchor_seq + 1}..${v.head.seq}), head ${v.head.hash}`);
      else out(`audit chain broken at entry ${v.seq} (${v.problem}): ${v.message}; ${v.count} entries before it verified`);
      return v.ok ? 0 : 1;
    }
    for (let after = Number.MIN_SAFE_INTEGER; ; ) {
      const page = await store.auditEntries({
        afterSeq: after,
        limit: PAGE,
        ...(since === undefined ? {} : { since }),
        ...(args.client === undefined ? {} : { client: args.client }),
      });
      for (const e of page) out(JSON.stringify({ ...e, at: new Date(e.at).toISOString() }));
      if (page.length < PAGE) return 0;
      after = page[page.length - 1]!.seq;
    }
  } finally {
    await store.close();
  }
}
