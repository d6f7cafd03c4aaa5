// Types for test/compat/token-budget.test.ts, which guards the budgets ./token-budget.mjs holds.
export interface Budget {
  now: number;
  room?: Record<string, number>;
}
export declare function toolTokens(tool: { name: string; description?: string; inputSchema: unknown }): number;
export declare const ROUND: { ask: number; escalate: number; webhook: number };
export declare const TOOL_BUDGETS: Record<
  'send_notification' | 'send_email' | 'send_sms' | 'send_slack' | 'send_webhook' | 'get_notification' | 'edit_notification' | 'retract_notification' | 'show_banner' | 'dismiss_banner' | 'list_banners',
  Budget
>;
export declare const LIST_BUDGETS: Record<'flat' | 'per-channel', Budget>;
export declare function roomOf(budget: Budget): number;
export declare function limitOf(budget: Budget): number;
export declare const PEERS: { name: string; tokens: number }[];
export declare function budgetRows(catalog: unknown): unknown[];
export declare const FULL_ROUND_ENV: Record<string, string>;
export declare const ROUND_LIMITS: { flat: number; send_notification: number; 'per-channel': number };
export declare function fullRoundRows(catalog: unknown): unknown[];
