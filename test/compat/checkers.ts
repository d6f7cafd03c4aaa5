/**
 * Checkers of the published rules each profile must meet. Each returns the list of
 * violations (empty = compatible), and is itself tested against known-bad schemas.
 */
type Json = Record<string, unknown>;

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Anthropic tool use (and Claude Code): root type object, no root combinators, names. */
export function anthropicViolations(tool: { name: string; inputSchema: Json }): string[] {
  const v: string[] = [];
  if (!TOOL_NAME.test(tool.name)) v.push(`name ${tool.name} does not match ${TOOL_NAME}`);
  if (tool.inputSchema.type !== 'object') v.push('root type is not "object"');
  for (const k of ['oneOf', 'anyOf', 'allOf']) if (k in tool.inputSchema) v.push(`root ${k}`);
  return v;
}

const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'enum',
  'const',
  'description',
  'title',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  '$defs',
  '$ref',
]);
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

/** OpenAI structured outputs, strict mode (function calling with strict: true). */
export function openAiStrictViolations(schema: Json): string[] {
  const v: string[] = [];
  if (schema.type !== 'object') v.push('/: root must be type object');
  if ('anyOf' in schema) v.push('/: root must not be anyOf');
  const walk = (node: Json, at: string, depth: number) => {
    if (depth > 10) v.push(`${at}: nested deeper than 10`);
    for (const key of Object.keys(node)) if (!STRICT_KEYWORDS.has(key)) v.push(`${at}: keyword ${key} not supported`);
    if (Array.isArray(node.type)) v.push(`${at}: type array`);
    if (typeof node.format === 'string' && !STRICT_FORMATS.has(node.format)) v.push(`${at}: format ${node.format}`);
    if (!['type', 'anyOf', 'enum', 'const', '$ref'].some((k) => k in node))
      v.push(`${at}: no type (a free-form value strict mode cannot carry)`);
    if (node.type === 'object' || 'properties' in node) {
      if (node.additionalProperties !== false) v.push(`${at}: additionalProperties must be false`);
      const props = Object.keys((node.properties ?? {}) as Json);
      // Closed and empty, below the root: it can only ever be {}, so whatever a model puts in it is dropped.
      if (at && props.length === 0)
        v.push(`${at}: a closed object with no properties (it can only be {}: an open object closed drops its data)`);
      const req = new Set((node.required ?? []) as string[]);
      for (const p of props) if (!req.has(p)) v.push(`${at}/${p}: not required`);
      for (const [p, child] of Object.entries((node.properties ?? {}) as Record<string, Json>)) walk(child, `${at}/${p}`, depth + 1);
    }
    if (node.items && typeof node.items === 'object') walk(node.items as Json, `${at}/items`, depth + 1);
    if (Array.isArray(node.anyOf)) (node.anyOf as Json[]).forEach((b, i) => walk(b, `${at}/anyOf/${i}`, depth + 1));
  };
  walk(schema, '', 0);
  return v;
}

/** SEP-2106: root type object with a oneOf of closed branches, each with a const discriminator. */
export function sep2106Violations(schema: Json, discriminator: string): string[] {
  const v: string[] = [];
  if (schema.type !== 'object') v.push('root type is not "object"');
  if (!Array.isArray(schema.oneOf) || schema.oneOf.length < 2) return [...v, 'root oneOf missing'];
  const seen = new Set<unknown>();
  (schema.oneOf as Json[]).forEach((b, i) => {
    const props = (b.properties ?? {}) as Record<string, Json>;
    if (b.type !== 'object') v.push(`oneOf/${i}: not type object`);
    if (b.additionalProperties !== false) v.push(`oneOf/${i}: not closed`);
    if (!(props[discriminator] && 'const' in props[discriminator]!)) v.push(`oneOf/${i}: ${discriminator} is not a const`);
    else if (seen.has(props[discriminator]!.const)) v.push(`oneOf/${i}: duplicate ${discriminator}`);
    else seen.add(props[discriminator]!.const);
    if (!((b.required ?? []) as string[]).includes(discriminator)) v.push(`oneOf/${i}: ${discriminator} not required`);
  });
  return v;
}

/** Gemini rejects type arrays such as ["string","null"]. */
export function typeArrayPaths(node: unknown, at = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((n, i) => typeArrayPaths(n, `${at}/${i}`));
  if (!node || typeof node !== 'object') return [];
  const here = Array.isArray((node as Json).type) ? [at || '/'] : [];
  return [...here, ...Object.entries(node).flatMap(([k, n]) => typeArrayPaths(n, `${at}/${k}`))];
}

/**
 * Objects a client's own strict conversion refuses (OpenAI Agents JS 0.20's
 * convertSchemasToStrict, `assertOpenAIStrictToolSchemaPreservesOpenObjects`, which then
 * falls back to a non-strict tool): an object that says `additionalProperties` other than
 * false, or declares no property; and a value with no type. Optional properties are no
 * violation here: that conversion makes them required and nullable itself.
 */
export function openObjectPaths(node: unknown, at = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((n, i) => openObjectPaths(n, `${at}/${i}`));
  if (!node || typeof node !== 'object') return [];
  const n = node as Json;
  const typed = ['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref'].some((k) => k in n);
  const declared = typeof n.properties === 'object' && n.properties !== null && Object.keys(n.properties).length > 0;
  const objectish = n.type === 'object' || 'properties' in n || 'additionalProperties' in n;
  const open =
    (objectish && n.additionalProperties !== false && (!declared || 'additionalProperties' in n)) ||
    (!typed && !at.endsWith('/properties'));
  const walk = Object.entries(n).flatMap(([k, v]) =>
    k === 'additionalProperties' || k === 'enum' || k === 'const' ? [] : openObjectPaths(v, `${at}/${k}`),
  );
  return [...(open ? [at || '/'] : []), ...walk];
}
