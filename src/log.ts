/**
 * JSON-lines logger on stderr: stdout belongs to JSON-RPC in stdio mode. Callers pass
 * fields, never message bodies or secrets.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const HEAD = { time: 1, level: 1, msg: 1 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose every line carries `fields` (e.g. the authenticated client). */
  child(fields: Record<string, unknown>): Logger;
}

/**
 * Lines written once the current turn of the event loop is over, together: on stdio a
 * send's log line is written after its answer, so it no longer delays it (issue 13).
 * Pending lines are written at once past `maxPending` characters, and at `exit` (process.exit,
 * a signal handler's exit, an uncaught exception); a SIGKILL loses at most one turn's lines.
 */
export function afterTurn(write: (text: string) => void, onExit: (flush: () => void) => void, maxPending = 64 * 1024): (line: string) => void {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    write(text);
  };
  onExit(flush);
  return (line) => {
    if (pending === '') setImmediate(flush);
    pending += line;
    if (pending.length > maxPending) flush();
  };
}

let stderrLines: ((line: string) => void) | undefined;
/** stderr, written after the turn (afterTurn); one writer for the process. */
function stderrAfterTurn(line: string): void {
  stderrLines ??= afterTurn(
    (text) => process.stderr.write(text),
    (flush) => process.on('exit', flush),
  );
  stderrLines(line);
}

export function createLogger(
  level: Level = 'info',
  write: (line: string) => void = stderrAfterTurn,
  base: Record<string, unknown> = {},
): Logger {
  // A logger is built per call (children carry the notification id): its constant fields are
  // serialised once here, so a line serialises only its own fields (issue 13).
  const baseJson = JSON.stringify(base).slice(1, -1);
  const baseShadowsHead = Object.keys(base).some((k) => k in HEAD);
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    const time = new Date().toISOString();
    let own = '';
    if (baseShadowsHead) return write(JSON.stringify({ time, level: lvl, msg, ...base, ...fields }) + '\n');
    if (fields) {
      // A field named like a constant one (or time, level, msg) replaces it once in the line: the slow way.
      for (const k in fields) if (k in base || k in HEAD) return write(JSON.stringify({ time, level: lvl, msg, ...base, ...fields }) + '\n');
      own = JSON.stringify(fields).slice(1, -1);
    }
    write(`{"time":"${time}","level":"${lvl}","msg":${JSON.stringify(msg)}${baseJson && ',' + baseJson}${own && ',' + own}}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
  };
}

/** For tests and library use. */
export const silentLogger: Logger = createLogger('error', () => {});
