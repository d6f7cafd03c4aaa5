/**
 * Stand-alone entry of the bundle gateway, for tests and for running it before the CLI
 * wires `notify-mcp bundle`:
 *   node dist/bundling/gateway-main.js --config servers.json [--http] [--port N] [--host H]
 * This is an entry point, so like src/cli.ts it may set the exit code.
 */
import { parseArgs } from 'node:util';
import { createLogger } from '../log.js';
import { runGateway } from './gateway.js';

const { values } = parseArgs({
  options: {
    config: { type: 'string' },
    http: { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'backoff-ms': { type: 'string' },
  },
  strict: true,
});
const log = createLogger('info');

async function main(): Promise<void> {
  if (!values.config) throw new Error('--config <servers.json> is required');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0-65535, got ${values.port}`);
  const initialMs = values['backoff-ms'] === undefined ? undefined : Number(values['backoff-ms']);
  const gateway = await runGateway({
    configPath: values.config,
    log,
    ...(values.http ? { http: { port, host: values.host } } : {}),
    ...(initialMs !== undefined && Number.isFinite(initialMs) ? { backoff: { initialMs, maxMs: 10_000 } } : {}),
  });
  // In HTTP mode, print the endpoint where a launcher can read it (stderr: never stdout).
  if (gateway.http) log.info('bundle listening', { url: gateway.http.url, port: gateway.http.port });
  const stop = (): void => void gateway.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await gateway.closed;
}

main().catch((err: unknown) => {
  log.error('bundle gateway failed', { error: err instanceof Error ? err.message : String(err) });
  process.exitCode = 1;
});
