#!/usr/bin/env node
/**
 * notify-mcp: arguments → config → serve. The only place that exits.
 *
 *   notify-mcp                         serve MCP over stdio
 *   notify-mcp --http [--port N] [--host H]
 *   notify-mcp schema [--profile P]    print what a client of that profile receives
 *   notify-mcp outbox [--limit N]      print the latest delivery records
 *   notify-mcp doctor [--json]         check the configuration before going live
 *   notify-mcp contacts [forget <channel> <recipient>]
 *   notify-mcp bundle FILE [--http …]  (or --servers FILE; --config FILE, the old form)
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createApp } from '../app.js';
import { GatewayConfigError } from '../bundling/errors.js';
import { serversFileArgument } from '../bundling/servers-argument.js';
import { buildCatalog } from '../mcp/catalog.js';
import { ConfigError, environment, loadConfig, PROFILES, type Config, type Profile } from '../config/config.js';
import { createLogger, type Logger } from '../core/log.js';
import { openStore, StoreError } from '../store/index.js';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from '../transports/http/defaults.js';
import { serveStdio } from '../transports/stdio/stdio.js';
import { VERSION } from '../core/version.js';

const USAGE = `Usage:
  notify-mcp                          serve MCP over stdio
  notify-mcp --http [--port N] [--host H]  serve Streamable HTTP at /mcp (default ${DEFAULT_HTTP_HOST}:${DEFAULT_HTTP_PORT})
  notify-mcp schema [--profile P]     print the tools/list a client of profile P receives (${PROFILES.join(', ')})
  notify-mcp outbox [--limit N]       print the latest delivery records (JSON lines)
  notify-mcp doctor [--json]          check credentials, reachability, store and settings; sends nothing
  notify-mcp contacts [forget <channel> <recipient>]
                                      list approved first contacts, or forget one
  notify-mcp bundle FILE [--http [--port N] [--host H]]
                                      serve the reconciled tools of every server in an mcpServers file
                                      (also --servers FILE; --config FILE is the old form)
  notify-mcp --help | --version
Options for every command:
  --env-file PATH                     read variables from a .env file (the environment wins over it)
Configuration is read from the environment; every variable is in .env.example, with a comment:
  ${fileURLToPath(new URL('../.env.example', import.meta.url))}`;

const out = (text: string) => process.stdout.write(text + '\n');

/** How long after stdio serving begins the store opens, if no call has needed it sooner. */
const STORE_OPEN_DELAY_MS = 100;

/** Every flag any command takes; parseArgs refuses the rest. */
const OPTIONS = {
  profile: { type: 'string' },
  limit: { type: 'string' },
  config: { type: 'string' },
  servers: { type: 'string' },
  http: { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  json: { type: 'boolean' },
  'env-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** A mistyped flag: our usage, not parseArgs' advice about positionals. */
class UsageError extends Error {
  override readonly name = 'UsageError';
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) throw err;
    const option = /'(-[^' ]+)/.exec((err as Error).message)?.[1];
    const what =
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? `unknown option ${option ?? ''}`.trim()
        : code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option
          ? `${option} needs a value`
          : 'the arguments could not be read';
    throw new UsageError(`${what}; use one of the forms below`);
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  if (values.help) return out(USAGE), 0;
  if (values.version) return out(VERSION), 0;
  const command = positionals[0] ?? 'serve';
  const env = environment(values['env-file']);

  if (command === 'doctor') {
    // Its own reading of the configuration: a setting it cannot read is one failed check, not an exit.
    const { runDoctor, formatReport } = await import('./doctor/index.js');
    const report = await runDoctor(env, values.host ? { host: values.host } : {});
    out(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return report.ok ? 0 : 1;
  }

  const config = loadConfig(env);
  const log = createLogger(config.logLevel);

  switch (command) {
    case 'schema': {
      const profile = (values.profile ?? config.defaultProfile) as Profile;
      if (!PROFILES.includes(profile)) throw new ConfigError(`--profile must be one of ${PROFILES.join(', ')}`);
      const c = buildCatalog(config)[profile];
      out(JSON.stringify({ profile, fingerprint: c.fingerprint, hashes: c.hashes, tools: c.tools }, null, 2));
      return 0;
    }
    case 'outbox': {
      const limit = Number(values.limit ?? 20);
      // Safe integers only: 1e99 is an integer to JavaScript and a datatype mismatch to SQLite.
      if (!Number.isSafeInteger(limit) || limit <= 0) throw new ConfigError('--limit must be a positive integer, e.g. --limit 50');
      // A reader: a mistyped NOTIFY_DATA_DIR is said, not answered with a new empty store.
      const store = await openStore(config, log, { existing: true });
      try {
        for (const record of await store.listDeliveries(limit)) {
          out(JSON.stringify({ ...record, created_at: new Date(record.created_at).toISOString() }));
        }
      } finally {
        await store.close();
      }
      return 0;
    }
    case 'contacts': {
      const { contactsCommand } = await import('./contacts.js');
      return contactsCommand(positionals.slice(1), config, log, out);
    }
    case 'serve': {
      if (values.http) return serveHttpUntilSignal(config, log, values);
      const app = await createApp(config, log, { deferStore: true });
      const { closed } = await serveStdio(app);
      log.info('serving stdio', { version: VERSION });
      // The store opens after start-up (src/store/deferred.ts): at the first call that needs
      // it, or STORE_OPEN_DELAY_MS after serving began, by when a host's opening requests
      // (initialize, tools/list) are answered. One that cannot open still ends the process
      // then, with the same line and exit code as before serving.
      const opening = setTimeout(() => void app.openStore().catch((err: unknown) => process.exit(reportFailure(err))), STORE_OPEN_DELAY_MS);
      const stop = () => void app.close().finally(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      await closed;
      clearTimeout(opening);
      // A session too short to have opened it still says when the store cannot open.
      await app.openStore();
      await app.close();
      return 0;
    }
    case 'bundle': {
      // Loaded only for this command: stdio start-up stays as small as it can be.
      const { runGateway } = await import('../bundling/index.js');
      const gateway = await runGateway({
        configPath: serversFileArgument({ positionals: positionals.slice(1), servers: values.servers, config: values.config }),
        log,
        ...(values.http ? { http: { port: parsePort(values.port), host: values.host ?? DEFAULT_HTTP_HOST } } : {}),
      });
      const stop = () => void gateway.close();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      await gateway.closed;
      return 0;
    }
    default:
      process.stderr.write(`Unknown command "${command}".\n${USAGE}\n`);
      return 2;
  }
}

function parsePort(raw: string | undefined): number {
  const port = Number(raw ?? DEFAULT_HTTP_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConfigError('--port must be an integer from 0 to 65535');
  return port;
}

/** HTTP mode: SIGTERM/SIGINT stop accepting, let in-flight sends finish, then close the store. */
async function serveHttpUntilSignal(config: Config, log: Logger, values: { port?: string; host?: string }): Promise<number> {
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

/** Says why the command failed, on stderr, and returns its exit code. */
function reportFailure(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`notify-mcp: ${err.message}\n${USAGE}\n`);
    return 2;
  }
  if (err instanceof ConfigError || err instanceof GatewayConfigError) {
    process.stderr.write(`notify-mcp: ${err.message}\n`);
    return 2;
  }
  if (err instanceof StoreError) {
    // The store is unreachable or unreadable: an operator's problem, said in one line.
    process.stderr.write(`notify-mcp: ${err.message}\n`);
    return 1;
  }
  process.stderr.write(JSON.stringify({ level: 'error', msg: 'fatal', error: err instanceof Error ? err.stack : String(err) }) + '\n');
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = reportFailure(err);
  },
);
