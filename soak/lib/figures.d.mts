/** Types of the memory figures in figures.mjs, for the test that checks them. */
export interface MemorySample {
  t: number;
  gc: boolean;
  rss: number;
  heapUsed: number;
  external: number;
}
export interface SecondHalfFigures {
  samples: number;
  q3_mean_mb: number;
  q4_mean_mb: number;
  growth_mb: number;
  tolerance_mb: number;
  ok: boolean;
}
export function rssFigures(samples: { t: number; bytes: number }[]): SecondHalfFigures & { min_mb: number; max_mb: number };
export function liveHeapFigures(memory: MemorySample[]): (SecondHalfFigures & { measured: true }) | { measured: false; ok: true };

/** Types of the scheduled-send figures (issue 24), for the test that checks them. */
export interface CallRecord {
  kind: string;
  token: string;
  code: string;
  structured?: Record<string, any>;
  id?: string;
  due?: number;
  at?: number;
}
export interface FinalRead {
  code: string;
  status?: string;
  error_code?: string;
  send_at?: string;
  first_attempt_at?: string;
}
export const PROVIDER_FAILURE_CODES: Set<string>;
export function scheduledFigures(input: {
  schedules: CallRecord[];
  retracts: CallRecord[];
  finals: Map<string, FinalRead>;
  delivered: Map<string, number>;
  deleted?: Map<string, number>;
  windows?: { label: string; from: number; to: number; mustCover?: boolean }[];
}): {
  figures: {
    scheduled: number;
    final: Record<'sent' | 'cancelled' | 'expired' | 'unknown' | 'failed' | 'waiting' | 'other', number>;
    final_by_state: Record<string, number>;
    failed_by_code: Record<string, number>;
    invariant: string;
    retracts: { calls: number; within_1s_of_due: number; answers: Record<string, number> };
    provider: Record<string, number>;
    release_late_ms: { releases: number; p50: number; p99: number; max: number };
    due_in_fault_windows: Record<string, Record<string, number>>;
    [k: string]: unknown;
  };
  breaks: string[];
};
