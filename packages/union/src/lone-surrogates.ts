/**
 * Lone surrogates: a string holding half of a UTF-16 surrogate pair cannot be encoded as
 * UTF-8, so it would reach its destination mangled; each is an issue of its own.
 */
import { loneSurrogateAt } from './echo.js';
import { fieldLabel, issuePath, type Issues, type ValidationIssue } from './issues.js';
import { isRecord } from './record.js';

/** A path segment chain, shared between siblings so a deep walk stays linear. */
interface Trail {
  key: PropertyKey;
  up: Trail | null;
}

const segmentsOf = (trail: Trail): PropertyKey[] => {
  const out: PropertyKey[] = [];
  for (let t: Trail | null = trail; t; t = t.up) out.push(t.key);
  return out.reverse();
};

/**
 * Every string in a field's value that holds half of a UTF-16 surrogate pair: it cannot be
 * encoded as UTF-8, so it would reach a provider mangled. Iterative, so nesting of any
 * depth is walked without the stack.
 */
export function addLoneSurrogates(field: string, value: unknown, base: string, variant: string | undefined, found: Issues): void {
  const todo: [unknown, Trail][] = [[value, { key: field, up: null }]];
  while (todo.length) {
    const [node, trail] = todo.pop()!;
    if (typeof node === 'string') {
      const at = loneSurrogateAt(node);
      if (at >= 0) found.add(() => loneSurrogateIssue(node, at, segmentsOf(trail), base, variant));
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i -= 1) todo.push([node[i], { key: i, up: trail }]);
    } else if (isRecord(node)) {
      for (const [k, v] of Object.entries(node).reverse()) todo.push([v, { key: k, up: trail }]);
    }
  }
}

function loneSurrogateIssue(text: string, at: number, segments: PropertyKey[], base: string, variant?: string): ValidationIssue {
  const unit = text.charCodeAt(at).toString(16).toUpperCase();
  const message = `Send both halves of the surrogate pair in ${fieldLabel(base, segments)}, or drop the character: it holds a lone surrogate (U+${unit}) at character ${at}, and text must be well-formed Unicode.`;
  const issue = { code: 'INVALID_FIELD', path: issuePath(base, segments), message };
  return variant ? { ...issue, variant } : issue;
}
