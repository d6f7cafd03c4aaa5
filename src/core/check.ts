/**
 * One line of `notify-mcp doctor`: what was checked, whether it passed, what was found, and
 * for a failure the fix. Channel modules return these from their own checks.
 */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do; set on every failure. */
  fix?: string;
}

export const pass = (name: string, detail: string): Check => ({ name, ok: true, detail });
export const fail = (name: string, detail: string, fix: string): Check => ({ name, ok: false, detail, fix });

/** What a channel's live check is given. */
export interface CheckContext {
  /** How long one request to the provider may take. */
  timeoutMs: number;
}
