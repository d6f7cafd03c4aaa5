import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { GatewayConfigError } from './errors.js';

/**
 * The `mcpServers` file MCP clients already use. Keys other clients add (`disabled`,
 * `autoApprove`, …) are ignored; `disabled: true` skips the server; `label` is ours (the
 * provenance tag), defaulting to the server id.
 */
const stdioSpec = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  label: z.string().optional(),
  disabled: z.boolean().optional(),
});
const httpSpec = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).default({}),
  label: z.string().optional(),
  disabled: z.boolean().optional(),
});
const fileSchema = z.object({
  mcpServers: z.record(z.string().min(1), z.union([stdioSpec, httpSpec])),
});

export type StdioServerSpec = z.infer<typeof stdioSpec>;
export type HttpServerSpec = z.infer<typeof httpSpec>;
export type UpstreamSpec = StdioServerSpec | HttpServerSpec;

export function isStdioSpec(spec: UpstreamSpec): spec is StdioServerSpec {
  return 'command' in spec;
}

/** Parse the file's JSON text; the errors name the offending server and field. */
export function parseServersConfig(text: string, source = 'servers config'): Map<string, UpstreamSpec> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new GatewayConfigError(`${source} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new GatewayConfigError(
      `${source} must look like {"mcpServers": {"id": {"command": …, "args": […], "env": {…}} | {"url": …}}}: ${detail}`,
    );
  }
  const out = new Map<string, UpstreamSpec>();
  for (const id of Object.keys(parsed.data.mcpServers).sort()) {
    const spec = parsed.data.mcpServers[id]!;
    if (!spec.disabled) out.set(id, spec);
  }
  if (out.size === 0) throw new GatewayConfigError(`${source} lists no enabled server under "mcpServers"`);
  return out;
}

export async function loadServersConfig(path: string): Promise<Map<string, UpstreamSpec>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new GatewayConfigError(`cannot read servers config ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseServersConfig(text, path);
}
