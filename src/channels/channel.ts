import type { Config } from '../config.js';

/** What a payload builder reports besides the payload (e.g. SMS segments). */
export interface PayloadMeta {
  segments?: number;
  encoding?: string;
}

/**
 * One channel's glue between its union branch and its provider: who the recipients are
 * (for the allowlist and opt-outs) and the exact wire payload. Adding a channel means a
 * union branch, one of these, and a provider.
 */
export interface Channel<N, P> {
  recipients(notification: N): string[];
  buildPayload(notification: N, ctx: { id: string; config: Config }): Promise<{ payload: P; meta?: PayloadMeta }>;
}
