/**
 * Whether a send waits: `send_at` in the future schedules it, quiet hours hold it. A waiting
 * send is written to the outbox (the store), answered at once (`scheduled` or `held`), and
 * released at its due time by whichever process sharing the store gets to it first
 * (./outbox.ts). Checked before anything is claimed, built or sent: what the caller can fix
 * (a recipient, a send_at out of range) is refused now, not at release.
 */
import { errors } from '../core/errors.js';
import { newNotificationId } from '../core/ids.js';
import { quietUntil } from '../policy/quiet-hours.js';
import type { Logger } from '../core/log.js';
import type { AuditContext } from '../store/ports/audit.js';
import type { ContactsPort } from '../store/ports/contacts.js';
import { waitingEntry, type OutboxEntry, type OutboxPort } from '../store/ports/outbox.js';
import { schemaHash } from '@notify-mcp/union';
import { StoreUnavailableError } from '../store/errors.js';
import { scheduleClaim, scopedKey } from './claim-keys.js';
import { DEFAULT_TIME, MAX_AHEAD_MS, type SendSettings } from './settings.js';

/** What a waiting send answers: a send result (./pipeline.ts) with status `scheduled` or `held`. */
export interface WaitingResult {
  id: string;
  via: string;
  status: 'scheduled' | 'held';
  provider: string;
  accepted_at: string;
  send_at?: string;
  release_at?: string;
  replayed?: boolean;
  [meta: string]: string | number | boolean | undefined;
}

/** What scheduling needs of the pipeline's deps. */
export interface ScheduleDeps {
  config: SendSettings;
  store: ContactsPort & OutboxPort;
  log: Logger;
  now: () => number;
  outbox?: { wake(dueAt: number): void };
}

/** The call as the outbox keeps it: what its release sends, without when; `urgent` stays, as quiet hours are asked again at the release. */
function storedCall(value: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { send_at: _at, idempotency_key: _key, ...call } = value;
  return call;
}

function parseSendAt(value: Readonly<Record<string, unknown>>, now: number, via: string): number | undefined {
  if (typeof value.send_at !== 'string') return undefined;
  const t = Date.parse(value.send_at);
  if (Number.isNaN(t))
    throw errors.invalidField(
      `send_at ${JSON.stringify(value.send_at)} is not a time; give RFC 3339 with an offset, e.g. 2026-07-01T09:00:00+02:00.`,
      { via, path: '/send_at' },
    );
  if (t > now + MAX_AHEAD_MS) {
    throw errors.invalidField(
      `send_at ${value.send_at} is more than 30 days ahead (latest ${new Date(now + MAX_AHEAD_MS).toISOString()}); nothing was scheduled. Schedule it nearer the time.`,
      { via, path: '/send_at' },
    );
  }
  // A time already past sends now, as if it were absent.
  return t > now ? t : undefined;
}

/**
 * When quiet hours hold a send leaving at `at`: the end of the window; undefined when none
 * applies, or the send is urgent where NOTIFY_QUIET_HOURS_URGENT=allow. Asked when a send is
 * made and again when a waiting one leaves, whatever held it.
 */
export function quietRelease(
  deps: Pick<ScheduleDeps, 'config' | 'log'>,
  via: string,
  at: number,
  urgent: boolean,
  client: string | null,
): number | undefined {
  const time = deps.config.time ?? DEFAULT_TIME;
  const quiet = quietUntil(time.quietHours, via, at);
  if (!quiet) return undefined;
  if (urgent) {
    const passes = time.urgent === 'allow';
    deps.log.warn(passes ? 'urgent send passed quiet hours' : 'urgent send held by quiet hours (NOTIFY_QUIET_HOURS_URGENT=deny)', {
      via,
      client,
      window: quiet.window.text,
    });
    if (passes) return undefined;
  }
  return quiet.until;
}

/**
 * The waiting answer, when `value` waits; undefined when it is to be sent now. `recipients`
 * passed the allowlist already; opt-outs are looked up here, before it is kept.
 */
export async function scheduleIfWaiting(
  deps: ScheduleDeps,
  via: string,
  provider: string,
  value: Readonly<Record<string, unknown>>,
  recipients: readonly string[],
  opts: { client: string | null; audit?: AuditContext },
): Promise<WaitingResult | undefined> {
  const now = deps.now();
  const sendAt = parseSendAt(value, now, via);
  const quietEnd = quietRelease(deps, via, sendAt ?? now, value.urgent === true, opts.client);
  if (quietEnd !== undefined) return schedule(sendAt ?? null, quietEnd);
  return sendAt === undefined ? undefined : schedule(sendAt, null);

  async function schedule(sendAtMs: number | null, releaseAt: number | null): Promise<WaitingResult> {
    const optedOut = await deps.store.findOptedOut({ via, recipients });
    if (optedOut !== undefined) throw errors.recipientOptedOut(optedOut, via, 'schedule');
    const key = typeof value.idempotency_key === 'string' ? value.idempotency_key : undefined;
    const { idempotency_key: _key, ...content } = value;
    const entry = waitingEntry({
      id: newNotificationId(),
      via,
      client: opts.client,
      call: storedCall(value),
      state: releaseAt === null ? 'scheduled' : 'held',
      send_at: sendAtMs,
      due_at: releaseAt ?? sendAtMs!,
      created_at: now,
      // Scoped by client like a send's key; a scheduling's key is its own (`schedule:`), so it never replays a send's result.
      idem_key: key === undefined ? null : scopedKey(opts.client, scheduleClaim(key)),
      payload_hash: key === undefined ? null : schemaHash(content),
    });
    const written = await deps.store.scheduleSend(entry, opts.audit).catch((err: unknown) => {
      if (!(err instanceof StoreUnavailableError)) throw err;
      deps.log.warn('scheduling not confirmed: store unavailable', { notificationId: entry.id, via, reason: err.reason });
      throw errors.storeUnconfirmed(err.retryAfterS, via, entry.id, err);
    });
    if (written.kind === 'existing') {
      if (written.entry.payload_hash !== entry.payload_hash) {
        throw errors.idempotencyConflict(
          `idempotency_key "${key}" was used for another scheduled send with a different payload; nothing was scheduled. Use a new key.`,
          { via, path: '/idempotency_key' },
        );
      }
      return { ...waitingResult(written.entry, provider), replayed: true };
    }
    deps.outbox?.wake(entry.due_at);
    deps.log.info(entry.state === 'held' ? 'send held by quiet hours' : 'send scheduled', {
      notificationId: entry.id,
      via,
      client: opts.client,
      dueAt: new Date(entry.due_at).toISOString(),
    });
    return waitingResult(entry, provider);
  }
}

export function waitingResult(entry: OutboxEntry, provider: string): WaitingResult {
  const result: WaitingResult = {
    id: entry.id,
    via: entry.via,
    status: entry.state === 'held' ? 'held' : 'scheduled',
    provider,
    accepted_at: new Date(entry.created_at).toISOString(),
  };
  if (entry.send_at !== null) result.send_at = new Date(entry.send_at).toISOString();
  if (entry.state === 'held') result.release_at = new Date(entry.due_at).toISOString();
  return result;
}
