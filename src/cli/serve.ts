/** `notify-mcp` (stdio) and `notify-mcp --http`: serve until the input ends or a signal comes. */
import { createApp } from '../app.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../core/log.js';
import { VERSION } from '../core/version.js';
import { DEFAULT_HTTP_HOST } from '../transports/http/defaults.js';
import { serveStdio } from '../transports/stdio/stdio.js';
import { parsePort } from './port.js';

/** stdio: a store that cannot open ends the process before serving (the caller says why). */
export async function serveStdioUntilEnd(config: Config, log: Logger): Promise<number> {
  const app = await createApp(config, log);
  const { closed } = await serveStdio(app);
  log.info('serving stdio', { version: VERSION });
  const stop = () => void app.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await closed;
  await app.close();
  return 0;
}

/** HTTP mode: SIGTERM/SIGINT stop accepting, let in-flight sends finish, then close the store. */
export async function serveHttpUntilSignal(config: Config, log: Logger, values: { port?: string; host?: string }): Promise<number> {
  const { assertBindable, serveHttp } = await import('../transports/http/listener.js');
  const port = parsePort(values.port);
  const host = values.host ?? DEFAULT_HTTP_HOST;
  assertBindable(config, host);
  const app = await createApp(config, log);
  const http = await serveHttp(app, { host, port, allowedHosts: [...config.http.allowedHosts] }, log);
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info('shutting down', { signal });
  await http.close();
  await app.close();
  log.info('stopped');
  return 0;
}
