/**
 * notify-mcp: arguments → config → a command (one module each, beside this one). The only
 * place that writes stdout: commands print through the `out` they are given.
 *
 *   notify-mcp                         serve MCP over stdio
 *   notify-mcp --http [--port N] [--host H]
 *   notify-mcp schema [--profile P]    print what a client of that profile receives
 *   notify-mcp outbox [--limit N] [--waiting]  print the latest delivery records, or what waits
 *   notify-mcp worker                  release scheduled and held sends (no MCP server)
 *   notify-mcp doctor [--json]         check the configuration before going live
 *   notify-mcp contacts [forget <channel> <recipient>]
 *   notify-mcp answer <id> <choice>
 *   notify-mcp audit verify | export [--since T] [--client C]
 *   notify-mcp bundle FILE [--http …]  (or --servers FILE; --config FILE, the old form)
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GatewayConfigError, GatewayStartError } from '../bundling/errors.js';
import { ConfigError, loadConfig, PROFILES, takeEnvironment } from '../config/config.js';
import { createLogger } from '../core/log.js';
import { VERSION } from '../core/version.js';
import { StoreError } from '../store/index.js';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from '../transports/http/defaults.js';
import { releaseEarlyReader } from '../transports/stdio/early-reader.js';
import { outboxCommand } from './outbox.js';
import { schemaCommand } from './schema.js';
import { serveHttpUntilSignal, serveStdioUntilEnd } from './serve.js';

const USAGE = `Usage:
  notify-mcp                          serve MCP over stdio
  notify-mcp --http [--port N] [--host H]  serve Streamable HTTP at /mcp (default ${DEFAULT_HTTP_HOST}:${DEFAULT_HTTP_PORT})
  notify-mcp schema [--profile P]     print the tools/list a client of profile P receives (${PROFILES.join(', ')})
  notify-mcp outbox [--limit N] [--waiting]
                                      print the latest delivery records, or with --waiting the
                                      scheduled and held sends, soonest first (JSON lines)
  notify-mcp worker                   release scheduled and held sends from the store, with no MCP
                                      server (for stdio setups: they leave with no host connected)
  notify-mcp doctor [--json] [--host H]
                                      check credentials, reachability, store and settings (--host: the
                                      HTTP bind address to judge); sends nothing
  notify-mcp contacts [forget <channel> <recipient>]
                                      list approved first contacts, or forget one
  notify-mcp answer <id> <choice>     answer a dry-run question (ask) from the shell, as its recipient would
  notify-mcp audit verify [--json]    check the audit chain: exit 0 with the count, 1 naming the first entry tampered with
  notify-mcp audit export [--since T] [--client C]
                                      print audit entries as JSON lines, oldest first
  notify-mcp bundle FILE [--http [--port N] [--host H]]
                                      serve the reconciled tools of every server in an mcpServers file
                                      (also --servers FILE; --config FILE is the old form)
  notify-mcp --help | --version
Options for every command:
  --env-file PATH                     read variables from a .env file (the environment wins over it)
Configuration is read from the environment; every variable is in .env.example, with a comment:
  ${fileURLToPath(new URL('../../.env.example', import.meta.url))}`;

// The path above holds from both places this module runs: dist/cli-chunks/ (the bundle) and dist/cli/ (tsc).
const out = (text: string) => process.stdout.write(text + '\n');

/**
 * A reader that stops early (`outbox | head`) ends a printing command quietly, as it ends
 * any Unix tool. The servers are left out: the stdio transport answers a closed stdout itself.
 */
function endQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(0);
  });
}

/** Every flag any command takes; parseArgs refuses the rest. */
const OPTIONS = {
  profile: { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  client: { type: 'string' },
  config: { type: 'string' },
  servers: { type: 'string' },
  http: { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  json: { type: 'boolean' },
  waiting: { type: 'boolean' },
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
  if (values.help) return (out(USAGE), 0);
  if (values.version) return (out(VERSION), 0);
  const command = positionals[0] ?? 'serve';
  if (command !== 'serve' && command !== 'bundle') endQuietlyOnClosedPipe();
  // The stdio entry may have read it already (start.ts): an --env-file is read once per start.
  const env = takeEnvironment(values['env-file']);

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
    case 'schema':
      return schemaCommand(config, values.profile, out);
    case 'outbox':
      return outboxCommand(config, log, values.limit, out, values.waiting === true);
    case 'worker': {
      const { workerCommand } = await import('./worker.js');
      return workerCommand(config, log);
    }
    case 'contacts': {
      const { contactsCommand } = await import('./contacts.js');
      return contactsCommand(positionals.slice(1), config, log, out);
    }
    case 'answer': {
      const { answerCommand } = await import('./answer.js');
      return answerCommand(positionals.slice(1), config, log, out);
    }
    case 'audit': {
      const { auditCommand } = await import('./audit.js');
      return auditCommand(positionals.slice(1), values, config, log, out);
    }
    case 'serve':
      return values.http ? serveHttpUntilSignal(config, log, values) : serveStdioUntilEnd(config, log);
    case 'bundle': {
      // Loaded only for this command: stdio start-up stays as small as it can be.
      const { bundleCommand } = await import('./bundle.js');
      return bundleCommand(positionals.slice(1), values, log);
    }
    default:
      process.stderr.write(`Unknown command "${command}".\n${USAGE}\n`);
      return 2;
  }
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
  if (err instanceof GatewayStartError) {
    process.stderr.write(`notify-mcp: ${err.message}\n`);
    return 1;
  }
  if (err instanceof StoreError) {
    // The store is unreachable or unreadable: an operator's problem, said in one line.
    process.stderr.write(`notify-mcp: ${err.message}\n`);
    return 1;
  }
  process.stderr.write(JSON.stringify({ level: 'error', msg: 'fatal', error: err instanceof Error ? err.stack : String(err) }) + '\n');
  return 1;
}

main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.exitCode = reportFailure(err);
    },
  )
  .finally(() => releaseEarlyReader(process.stdin));
