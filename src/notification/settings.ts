/** What a send needs of the configuration: its time budget, and the approval policy. */
import type { ApprovalMode, ApprovalRule } from './approval-rules.js';

export interface SendSettings {
  /** Per-call time budget for a send, retries included. */
  sendBudgetMs: number;
  /** mode: who decides (NOTIFY_APPROVAL_MODE); ttlMs: how long a send held for the console waits (NOTIFY_APPROVAL_TTL_S). */
  approval: { rules: readonly ApprovalRule[]; mode?: ApprovalMode; ttlMs?: number };
}
