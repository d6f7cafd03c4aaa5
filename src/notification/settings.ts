/** What a send needs of the configuration: its time budget, the approval policy, and time (send_at, quiet hours). */
import type { QuietWindow } from '../policy/quiet-hours.js';
import type { ApprovalMode, ApprovalRule } from './approval-rules.js';
import type { EscalationPolicy } from './escalation-policy.js';

export interface SendSettings {
  /** Per-call time budget for a send, retries included. */
  sendBudgetMs: number;
  /** mode: who decides (NOTIFY_APPROVAL_MODE); ttlMs: how long a send held for the console waits (NOTIFY_APPROVAL_TTL_S). */
  approval: { rules: readonly ApprovalRule[]; mode?: ApprovalMode; ttlMs?: number };
  /** Scheduled sends and quiet hours; without it, send_at is still taken, with the defaults. */
  time?: TimeSettings;
  /** NOTIFY_ESCALATIONS: the policies a send may name (`escalate`). */
  escalations?: readonly EscalationPolicy[];
}

export interface TimeSettings {
  /** A waiting send due longer ago than this when a process gets to it is expired (NOTIFY_SCHEDULE_GRACE_S). */
  graceMs: number;
  /** How often the release loop looks for sends other processes scheduled (NOTIFY_SCHEDULE_POLL_S). */
  pollMs: number;
  quietHours: readonly QuietWindow[];
  /** Whether `urgent: true` passes quiet hours (NOTIFY_QUIET_HOURS_URGENT). */
  urgent: 'allow' | 'deny';
}

export const DEFAULT_TIME: TimeSettings = { graceMs: 3_600_000, pollMs: 30_000, quietHours: [], urgent: 'deny' };
/** send_at may be at most this far ahead. */
export const MAX_AHEAD_MS = 30 * 86_400_000;
