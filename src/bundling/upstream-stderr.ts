/**
 * An upstream's stderr, as lines of the gateway's own JSON log. A line that is a JSON object
 * (an upstream that logs JSON lines, as notify-mcp does) passes through as that object with
 * `upstream` set to the server id, so a log reader filters on its fields as it would on the
 * upstream's own log; any other line becomes `{ time, level: "info", msg: line, upstream }`.
 */

/** Longer lines are cut (and never parsed): a runaway upstream cannot flood one log line. */
export const MAX_STDERR_LINE = 16_000;

export function upstreamStderrLine(line: string, upstream: string, now: Date = new Date()): string {
  if (line.length <= MAX_STDERR_LINE && line.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(line);
      // The id is ours to set: an upstream's own `upstream` field is overwritten, never trusted.
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return JSON.stringify({ ...parsed, upstream }) + '\n';
    } catch {
      // not JSON after all: wrapped below
    }
  }
  const cut = line.length > MAX_STDERR_LINE;
  return JSON.stringify({ time: now.toISOString(), level: 'info', msg: cut ? line.slice(0, MAX_STDERR_LINE) : line, upstream, ...(cut ? { truncated: true } : {}) }) + '\n';
}
