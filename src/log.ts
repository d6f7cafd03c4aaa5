/**
 * JSON-lines logger on stderr: stdout belongs to JSON-RPC in stdio mode. Callers pass
 * fields, never message bodies or secrets.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose every line carries `fields` (e.g. the authenticated client). */
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(
  level: Level = 'info',
  write: (line: string) => void = (line) => process.stderr.write(line),
  base: Record<string, unknown> = {},
): Logger {
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields }) + '\n');
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
