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

let pendingLines: string[] = [];
let flushAtExit = false;
const flushStderr = () => {
  const out = pendingLines.join('');
  pendingLines = [];
  if (out) process.stderr.write(out);
};

/**
 * stderr, written once per turn of the event loop: the lines a call logs go out after its
 * answer, in one write (on a pipe or a file each write is a synchronous system call, which
 * would otherwise sit on the answer's path). What is pending is written at exit.
 */
function writeStderr(line: string): void {
  if (pendingLines.push(line) > 1) return;
  setImmediate(flushStderr);
  if (!flushAtExit) process.once('exit', flushStderr);
  flushAtExit = true;
}

export function createLogger(
  level: Level = 'info',
  write: (line: string) => void = writeStderr,
  base: Record<string, unknown> = {},
): Logger {
  // A logger is built per call (children carry the notification id): its constant fields are
  // serialised once here, so a line serialises only its own fields.
  const baseJson = JSON.stringify(base).slice(1, -1);
  const baseShadowsHead = Object.keys(base).some((k) => k in HEAD);
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    const time = new Date().toISOString();
    let own = '';
    if (baseShadowsHead) return write(JSON.stringify({ time, level: lvl, msg, ...base, ...fields }) + '\n');
    if (fields) {
      // A field named like a constant one (or time, level, msg) replaces it once in the line: the slow way.
      for (const k in fields)
        if (k in base || k in HEAD) return write(JSON.stringify({ time, level: lvl, msg, ...base, ...fields }) + '\n');
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
