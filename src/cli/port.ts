import { ConfigError } from '../config/config.js';
import { DEFAULT_HTTP_PORT } from '../transports/http/defaults.js';

/** `--port`: 0 picks a free one. */
export function parsePort(raw: string | undefined): number {
  const port = Number(raw ?? DEFAULT_HTTP_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConfigError('--port must be an integer from 0 to 65535');
  return port;
}
