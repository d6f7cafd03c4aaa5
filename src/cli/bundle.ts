/** `notify-mcp bundle FILE [--http …]`: the gateway over every server of an mcpServers file. */
import type { Logger } from '../core/log.js';
import { runGateway } from '../bundling/index.js';
import { serversFileArgument } from '../bundling/servers-argument.js';
import { DEFAULT_HTTP_HOST } from '../transports/http/defaults.js';
import { parsePort } from './port.js';

export async function bundleCommand(
  args: string[],
  values: { servers?: string; config?: string; http?: boolean; port?: string; host?: string },
  log: Logger,
): Promise<number> {
  const gateway = await runGateway({
    configPath: serversFileArgument({ positionals: args, servers: values.servers, config: values.config }),
    log,
    ...(values.http ? { http: { port: parsePort(values.port), host: values.host ?? DEFAULT_HTTP_HOST } } : {}),
  });
  const stop = () => void gateway.close();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await gateway.closed;
  return 0;
}
