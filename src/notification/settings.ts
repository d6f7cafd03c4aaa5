/** What a send needs of the configuration: its time budget, and the approval policy. */
import type { ApprovalRule } from './approval-rules.js';

export interface SendSettings {
  /** Per-call time budget for a send, retries included. */
  sendBudgetMs: number;
  approval: { rules: readonly ApprovalRule[] };
}
