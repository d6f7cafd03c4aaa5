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
