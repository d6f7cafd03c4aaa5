/** Order statistics over repeated runs: medians with spreads, and ratios of medians. */

export function quantile(values, q) {
  const xs = [...values].sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  const pos = (xs.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo);
}

/** Median with min-max spread: with 3-10 runs, the range says more than quartiles. */
export function summarize(values) {
  return { median: quantile(values, 0.5), lo: Math.min(...values), hi: Math.max(...values), n: values.length };
}

/**
 * Ratio of two summarized series measured in the same run, with the spread of the
 * pairwise ratios (run i of one against run i of the other, taken back to back).
 */
export function ratio(a, b, aRuns, bRuns) {
  const r = { median: a.median / b.median };
  if (aRuns && bRuns && aRuns.length === bRuns.length) {
    const pairs = aRuns.map((x, i) => x / bRuns[i]);
    r.lo = Math.min(...pairs);
    r.hi = Math.max(...pairs);
  }
  return r;
}

export function exact(value) {
  return { median: value, lo: value, hi: value, n: 1, exact: true };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
