import { z } from 'zod';
import { readConfigFile } from '../config/config-file.js';
import { clipText } from '@notify-mcp/union';
import { GatewayConfigError } from './errors.js';

/** The largest delay `setTimeout` honours (about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Bound of each tool call forwarded to the server, in milliseconds; default 60 s. Named
 * with its unit on purpose: the `timeout` key some clients read means seconds in one and
 * milliseconds in another, so it is left to them and not read here.
 */
const timeoutMs = z.number().int().positive().max(MAX_TIMEOUT_MS).optional();

/**
 * The `mcpServers` file MCP clients already use. Keys other clients add (`disabled`,
 * `autoApprove`, `timeout`, …) are ignored; `disabled: true` skips the server; `label` (the
 * provenance tag, default the server id) and `timeoutMs` are ours.
 */
const stdioSpec = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  label: z.string().optional(),
  timeoutMs,
  disabled: z.boolean().optional(),
});
const httpSpec = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).default({}),
  label: z.string().optional(),
  timeoutMs,
  disabled: z.boolean().optional(),
});
// Each server is parsed on its own (below), with the schema its shape asks for, so an error
// names the wrong field rather than "invalid input" for the union of both.
/** Ids name the server in every log line, error result and tool prefix: kept short. */
const MAX_SERVER_ID = 64;

const fileSchema = z.object({
  mcpServers: z.record(z.string().min(1), z.record(z.string(), z.unknown())),
});

export type StdioServerSpec = z.infer<typeof stdioSpec>;
export type HttpServerSpec = z.infer<typeof httpSpec>;
export type UpstreamSpec = StdioServerSpec | HttpServerSpec;

export function isStdioSpec(spec: UpstreamSpec): spec is StdioServerSpec {
  return 'command' in spec;
}

/** A server is stdio when it has a `command`, else Streamable HTTP. */
function specSchema(raw: Record<string, unknown>): typeof stdioSpec | typeof httpSpec {
  return 'command' in raw ? stdioSpec : httpSpec;
}

/** Problems listed in one error at most; the rest are counted (60,000 servers made megabytes). */
const MAX_PROBLEMS = 20;

function problemsText(problems: readonly string[]): string {
  const more = problems.length - MAX_PROBLEMS;
  return problems.slice(0, MAX_PROBLEMS).join('; ') + (more > 0 ? `; and ${more} more` : '');
}

/** A server id or key as an error names it: the file's keys may be of any length. */
const clip = (key: string) => clipText(key, 64);

function issuesText(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): string {
  return problemsText(issues.map((i) => `${[...prefix, ...i.path].map((k) => clip(String(k))).join('.') || '(root)'}: ${i.message}`));
}

/** Parse the file's JSON text; the errors name the offending server and field. */
export function parseServersConfig(text: string, source = 'servers config'): Map<string, UpstreamSpec> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new GatewayConfigError(`${source} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const format = `${source} must look like {"mcpServers": {"id": {"command": …, "args": […], "env": {…}} | {"url": …}}}`;
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new GatewayConfigError(`${format}: ${issuesText(parsed.error.issues)}`);
  const out = new Map<string, UpstreamSpec>();
  const problems: string[] = [];
  for (const id of Object.keys(parsed.data.mcpServers).sort()) {
    const raw = parsed.data.mcpServers[id]!;
    if (id.length > MAX_SERVER_ID) {
      problems.push(`mcpServers.${clip(id)}: a server id is at most ${MAX_SERVER_ID} characters`);
      continue;
    }
    const spec = specSchema(raw).safeParse(raw);
    if (!spec.success) problems.push(issuesText(spec.error.issues, ['mcpServers', id]));
    else if (!spec.data.disabled) out.set(id, spec.data);
  }
  if (problems.length > 0) throw new GatewayConfigError(`${format}: ${problemsText(problems)}`);
  if (out.size === 0) throw new GatewayConfigError(`${source} lists no enabled server under "mcpServers"`);
  return out;
}

/** A servers file is a few kilobytes; this bounds what a wrong path can make us read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

export async function loadServersConfig(path: string): Promise<Map<string, UpstreamSpec>> {
  let text: string;
  try {
    text = readConfigFile(path, MAX_CONFIG_BYTES);
  } catch (err) {
    throw new GatewayConfigError(`cannot read servers config ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseServersConfig(text, path);
}
