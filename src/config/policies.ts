/** The sending policies read from the environment: rate limits, quiet hours' urgent rule, approval. */
import type { ConfiguredChannel } from '../channels/channel.js';
import { ConfigError, list } from '../core/env.js';
import { noticeCall, type NoticeTarget } from '../notification/approval-notice.js';
import { APPROVAL_MODES, type ApprovalMode } from '../notification/approval-rules.js';
import { isAllowed } from '../policy/allowlist.js';
import type { RateLimit } from '../policy/rate-limit.js';
import { describeValue } from '@notify-mcp/union';

const WINDOWS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** NOTIFY_RATE_LIMITS: `<channel or *>=<count>/<s|m|h|d>`, comma-separated. */
export function rateLimits(raw: string | undefined, channels: readonly string[]): RateLimit[] {
  if (!raw) return [];
  return list(raw).map((item) => {
    const m = /^([a-z0-9*_-]+)=(\d+)\/(s|m|h|d)$/.exec(item);
    if (!m) throw new ConfigError(`NOTIFY_RATE_LIMITS: ${describeValue(item)} must look like sms=20/h`);
    // A limit on a name no channel has would never apply: refuse it rather than ignore it.
    if (m[1] !== '*' && !channels.includes(m[1]!)) {
      throw new ConfigError(`NOTIFY_RATE_LIMITS: ${describeValue(m[1])} is not a channel; use ${[...channels, '*'].join(', ')}`);
    }
    return { via: m[1]!, limit: Number(m[2]), windowMs: WINDOWS[m[3]!]! };
  });
}

/** NOTIFY_QUIET_HOURS_URGENT: whether an urgent send may pass quiet hours. */
export function urgentPolicy(raw: string | undefined): 'allow' | 'deny' {
  if (raw === undefined || raw === '' || raw === 'deny') return 'deny';
  if (raw === 'allow') return 'allow';
  throw new ConfigError(`NOTIFY_QUIET_HOURS_URGENT must be allow or deny (default), got ${describeValue(raw)}`);
}

/** NOTIFY_APPROVAL_MODE; `ask` when unset. */
export function approvalMode(raw: string | undefined): ApprovalMode {
  if (!raw) return 'ask';
  if ((APPROVAL_MODES as readonly string[]).includes(raw)) return raw as ApprovalMode;
  throw new ConfigError(
    `NOTIFY_APPROVAL_MODE: ${describeValue(raw)} is not a mode; use ${APPROVAL_MODES.join(', ')} (ask: the client asks its user; console: a person decides in /console)`,
  );
}

/** NOTIFY_APPROVAL_KEY, refused at start when the SDK's codec would refuse it. */
export function approvalKey(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  // The SDK's HMAC codec refuses shorter keys; say so at start, not at the first approval.
  if (Buffer.byteLength(raw) < 32) throw new ConfigError('NOTIFY_APPROVAL_KEY must be at least 32 bytes (e.g. `openssl rand -hex 32`)');
  return raw;
}

/**
 * NOTIFY_APPROVAL_NOTIFY=`<channel>:<recipient>` (`slack:#approvals`, `email:ops@example.com`).
 * Everything a notice could fail on for good is refused here, at start: a target its channel's
 * branch or allowlist refuses, a mode that never holds, no public URL to link to.
 */
export function approvalNotify(
  raw: string | undefined,
  /** NOTIFY_PUBLIC_URL, read only when a notice needs it. */
  publicUrl: () => string | undefined,
  mode: ApprovalMode,
  channels: readonly ConfiguredChannel[],
): NoticeTarget | undefined {
  if (!raw) return undefined;
  const able = channels.filter((c) => c.channel.notice !== undefined).map((c) => c.name);
  const shape = `<channel>:<recipient>, the channel one of ${able.join(', ')} (e.g. ${able[0] ?? 'channel'}:<recipient>)`;
  const at = raw.indexOf(':');
  const via = raw.slice(0, at).trim();
  const to = raw.slice(at + 1).trim();
  if (at < 1 || !to) throw new ConfigError(`NOTIFY_APPROVAL_NOTIFY: ${describeValue(raw)} must be ${shape}`);
  const channel = channels.find((c) => c.name === via);
  if (!channel || !able.includes(via)) {
    throw new ConfigError(`NOTIFY_APPROVAL_NOTIFY: ${describeValue(via)} is not a channel a notice can go through; write ${shape}`);
  }
  if (mode === 'ask') {
    throw new ConfigError(
      'NOTIFY_APPROVAL_NOTIFY announces sends held for the console, and NOTIFY_APPROVAL_MODE=ask never holds one; set NOTIFY_APPROVAL_MODE=console (or ask-then-console), or unset NOTIFY_APPROVAL_NOTIFY',
    );
  }
  const baseUrl = publicUrl();
  if (!baseUrl) {
    throw new ConfigError(
      "NOTIFY_APPROVAL_NOTIFY links each notice to the send's console page: set NOTIFY_PUBLIC_URL to the base URL people reach this server at, e.g. https://notify.example.com",
    );
  }
  const target: NoticeTarget = { via, to, baseUrl };
  const parsed = channel.branch.safeParse(
    noticeCall(channel.channel, target, { id: 'ntf_check', via, client: null, recipientClasses: [] }),
  );
  if (!parsed.success) {
    throw new ConfigError(
      `NOTIFY_APPROVAL_NOTIFY: ${describeValue(to)} is not a recipient the ${channel.channel.label} channel takes (${parsed.error.issues[0]?.message ?? 'refused'}); write ${shape}`,
    );
  }
  if (!isAllowed(channel.channel.allowlist.matcher, to, channel.allow)) {
    const variable = channel.channel.allowlist.variable;
    throw new ConfigError(
      `NOTIFY_APPROVAL_NOTIFY: ${describeValue(to)} is not on the ${via} allowlist (${variable}); add it to ${variable}, or name a target it allows`,
    );
  }
  return target;
}
