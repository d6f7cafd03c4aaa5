import { GatewayConfigError } from './errors.js';

const EXAMPLE =
  'notify-mcp bundle servers.json (a file in the mcpServers format: {"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}}})';

/**
 * The servers file of `notify-mcp bundle`: a positional argument, `--servers FILE`, or the old
 * `--config FILE`. The positional and `--servers` forms exist because the MCP Inspector takes
 * `--config` for itself, so `npx @modelcontextprotocol/inspector node dist/cli.js bundle
 * --config …` never reached us. Given twice with different files, it is refused, not guessed.
 */
export function serversFileArgument(given: {
  positionals: readonly string[];
  servers?: string | undefined;
  config?: string | undefined;
}): string {
  if (given.positionals.length > 1) {
    throw new GatewayConfigError(
      `Give bundle one servers file, e.g. ${EXAMPLE}; got ${given.positionals.length}: ${given.positionals.join(' ')}`,
    );
  }
  const files = [...new Set([given.positionals[0], given.servers, given.config].filter((f): f is string => f !== undefined && f !== ''))];
  if (files.length === 0) throw new GatewayConfigError(`Give bundle its servers file, e.g. ${EXAMPLE}`);
  if (files.length > 1) throw new GatewayConfigError(`Give bundle one servers file, e.g. ${EXAMPLE}; got ${files.join(' and ')}`);
  return files[0]!;
}
