/** Rendering the rows as one Markdown table (printed and written to bench/results.md). */

function num(x, unit) {
  if (!Number.isFinite(x)) return '—';
  if (unit === 'tokens') return Math.round(x).toLocaleString('en-US');
  if (unit === 'ms') return x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US');
  return Math.round(x).toLocaleString('en-US');
}

function cell(s, unit) {
  if (!s) return '—';
  const u = unit === 'tokens' ? '' : ` ${unit}`;
  if (s.exact || s.lo === s.hi) return `${num(s.median, unit)}${u}`;
  return `${num(s.median, unit)}${u} (${num(s.lo, unit)}–${num(s.hi, unit)})`;
}

function ratioCell(r) {
  if (!r) return '—';
  const f = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));
  return r.lo === undefined || r.lo === r.hi ? `${f(r.median)}×` : `${f(r.median)}× (${f(r.lo)}–${f(r.hi)})`;
}

/** Whether the target is met, and by how much it is missed. */
export function verdict(row) {
  const t = row.target;
  if (!t) return '';
  if (t.absolute) {
    const v = row.value.median;
    // A target of none (max 0) has no percentage to miss by.
    const pct = t.max > 0 ? ` (${((v / t.max - 1) * 100).toFixed(0)}%)` : '';
    return v <= t.max ? `met (${Math.round(t.max - v)} under)` : `**missed** by ${Math.round(v - t.max)}${pct}`;
  }
  const r = row.ratio.median;
  if (t.max !== undefined) return r <= t.max ? 'met' : `**missed**: ${r.toFixed(2)}× vs ${t.max}× (${((r / t.max - 1) * 100).toFixed(0)}% over)`;
  return r >= t.min ? 'met' : `**missed**: ${r.toFixed(2)}× vs ${t.min}× (${((1 - r / t.min) * 100).toFixed(0)}% short)`;
}

export function markdownTable(rows) {
  const out = [
    '| # | Measure | notify-mcp: median (min–max) | Baseline | Baseline: median (min–max) | Ratio (min–max of paired runs) | Target | Result | Notes |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const esc = (s) => String(s ?? '').replaceAll('|', '\\|');
  for (const r of rows) {
    const sec = r.section.split('.')[0];
    if (r.skipped) {
      out.push(`| ${sec} | ${esc(r.name)} | — | — | — | — | ${esc(r.target?.text ?? '')} | ${esc(r.skipped)} | |`);
      continue;
    }
    out.push(
      `| ${sec} | ${esc(r.name)} | ${cell(r.value, r.unit)} | ${esc(r.baselineName ?? '—')} | ${cell(r.baseline, r.unit)} | ${ratioCell(r.ratio)} | ${esc(r.target?.text ?? '')} | ${verdict(r)} | ${esc(r.note ?? '')} |`,
    );
  }
  return out.join('\n');
}
