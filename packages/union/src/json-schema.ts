/**
 * zod to JSON Schema (2020-12, input side), cleaned for tool lists: no `$schema`, no
 * regex that merely restates a `format`, and type arrays (`["string","null"]`, which
 * Gemini rejects) rewritten as `anyOf`.
 */
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

export function toJsonSchema(schema: z.ZodType): JsonSchema {
  const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete raw.$schema;
  return clean(raw) as JsonSchema;
}

function clean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(clean);
  if (!node || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) out[key] = clean(value);
  if (typeof out.format === 'string' && typeof out.pattern === 'string') delete out.pattern;
  if (Array.isArray(out.type)) {
    const { type, description, ...rest } = out;
    const anyOf = (type as string[]).map((t) => (t === 'null' ? { type: 'null' } : { type: t, ...rest }));
    return description === undefined ? { anyOf } : { anyOf, description };
  }
  return out;
}

/** Deep copy of plain JSON data (schemas are data; profiles must never share nodes). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}
