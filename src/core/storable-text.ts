/**
 * Text a store cannot keep: U+0000 (PostgreSQL TEXT and JSONB refuse it) and unpaired
 * surrogates (lone surrogates: not encodable as UTF-8, so PostgreSQL refuses them too). Every tool call is
 * screened here before its handler runs, its arguments and the client name alike, so no
 * provider is called for a call whose record could not be written, and both stores answer
 * the same. (SQLite would store either; its records must read the same as PostgreSQL's.)
 * Provider callbacks (their form fields and what a channel reads from them) and the names
 * configuration gives clients are screened here too.
 */
import type { ToolErrorBody } from './errors.js';
import { clipText, describeValue } from '@notify-mcp/union';

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function what(s: string): string {
  const m = UNSTORABLE.exec(s)!;
  const c = m[0].charCodeAt(0);
  return c === 0 ? `U+0000 (NUL) at position ${m.index}` : `a lone surrogate (U+${c.toString(16).toUpperCase()}) at position ${m.index}`;
}

/** What in `s` a store cannot keep, in words (`U+0000 (NUL) at position 3`), or undefined. */
export function unstorableIn(s: string): string | undefined {
  return UNSTORABLE.test(s) ? what(s) : undefined;
}

interface Node {
  v: unknown;
  key?: string | number;
  parent?: Node;
}

/** A JSON Pointer, built only for the string found: the walk keeps parent links, not paths. */
function pointer(node: Node | undefined, extra?: string): string {
  const parts: string[] = extra === undefined ? [] : [extra];
  for (let n = node; n?.key !== undefined; n = n.parent) parts.push(String(n.key));
  // A member name may be a megabyte long: the pointer is echoed clipped, as every echo is.
  return clipText(
    parts
      .reverse()
      .map((p) => `/${p.replace(/~/g, '~0').replace(/\//g, '~1')}`)
      .join(''),
  );
}

/** The first string (member name or value) in `value` a store cannot keep, with its JSON Pointer; walked without recursion. */
export function findUnstorableText(value: unknown): { path: string; what: string } | undefined {
  const stack: Node[] = [{ v: value }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { v } = node;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) return { path: pointer(node), what: what(v) };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], key: i, parent: node });
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        if (UNSTORABLE.test(k)) return { path: pointer(node, k), what: `its name holds ${what(k)}` };
        stack.push({ v: (v as Record<string, unknown>)[k], key: k, parent: node });
      }
    }
  }
  return undefined;
}

/** Why this call is refused before anything runs, or undefined when every text of it can be stored. */
export function unstorableRefusal(args: unknown, client: string | null): ToolErrorBody | undefined {
  if (client !== null && UNSTORABLE.test(client)) {
    return {
      code: 'INVALID_FIELD',
      message: `The client name ${describeValue(client)} holds ${what(client)}, which this server cannot store; nothing was done. Connect with a client name (clientInfo.name) without it.`,
    };
  }
  const found = findUnstorableText(args);
  if (found === undefined) return undefined;
  return {
    code: 'INVALID_FIELD',
    path: found.path,
    message: `${found.path || 'The arguments'} holds ${found.what}, which this server cannot store; nothing was done. Remove it and call again.`,
  };
}
