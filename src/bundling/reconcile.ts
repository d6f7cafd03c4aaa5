import { schemaHash } from '../union/schema-hash.js';
import { alternativeName, candidateName } from './names.js';
import { tagDescription } from './provenance.js';
import { DuplicateServerIdError } from './errors.js';
import type { Collision, Reconciled, Rename, ServerBundle, Tool, ToolTarget } from './types.js';

/** `%` and `:` inside a part are written `%25` and `%3A`: the one bare `:` separates. */
function escapePart(part: string): string {
  return part.replace(/%/g, '%25').replace(/:/g, '%3A');
}

function unescapePart(part: string): string {
  return part.replace(/%(25|3A)/g, (_, code: string) => (code === '25' ? '%' : ':'));
}

/**
 * The key of the reverse map: `serverId:originalName`, with every `%` and `:` inside either
 * part escaped as `%25` and `%3A`, so `github:create_issue` reads as it looks, and server
 * `a:b` with tool `c` (`a%3Ab:c`) never shares a key with server `a` and tool `b:c`
 * (`a:b%3Ac`).
 */
export function reverseKey(serverId: string, originalName: string): string {
  return `${escapePart(serverId)}:${escapePart(originalName)}`;
}

/** The inverse of `reverseKey`; undefined for a string it cannot have produced. */
export function parseReverseKey(key: string): ToolTarget | undefined {
  const parts = key.split(':');
  if (parts.length !== 2) return undefined;
  const [serverId, originalName] = parts.map(unescapePart) as [string, string];
  return reverseKey(serverId, originalName) === key ? { serverId, originalName } : undefined;
}

/** Code-point order: the same everywhere, unlike localeCompare. */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Entry {
  serverId: string;
  label: string;
  tool: Tool;
  hash: string;
}

/**
 * Merge several servers' tools into one list with unique, legal names. Only names offered
 * more than once are prefixed `<serverId>__<name>` (and get a provenance tag); names that
 * break `^[a-zA-Z0-9_-]{1,64}$` are shortened deterministically. Nothing is dropped: every
 * input tool is in the output, and every collision and rename is in the report. The output
 * does not depend on the order of the bundles or of their tools.
 */
export function reconcile(bundles: readonly ServerBundle[]): Reconciled {
  const seen = new Set<string>();
  for (const b of bundles) {
    if (seen.has(b.serverId)) throw new DuplicateServerIdError(b.serverId);
    seen.add(b.serverId);
  }

  const entries: Entry[] = bundles.flatMap((b) =>
    b.tools.map((tool) => ({ serverId: b.serverId, label: b.label ?? b.serverId, tool, hash: schemaHash(tool) })),
  );
  // Total order on the input, so ties (a server listing one name twice) break the same way.
  entries.sort(
    (a, b) => cmp(a.serverId, b.serverId) || cmp(a.tool.name, b.tool.name) || cmp(a.hash, b.hash),
  );

  const owners = new Map<string, string[]>();
  for (const e of entries) owners.set(e.tool.name, [...(owners.get(e.tool.name) ?? []), e.serverId]);
  const collisions: Collision[] = [...owners]
    .filter(([, ids]) => ids.length > 1)
    .map(([name, serverIds]) => ({ name, serverIds }))
    .sort((a, b) => cmp(a.name, b.name));

  const planned = entries.map((e) => {
    const prefixed = (owners.get(e.tool.name)?.length ?? 0) > 1;
    return { e, prefixed, ...candidateName(e.serverId, e.tool.name, prefixed) };
  });
  // Untouched names claim first, so a literal `github__x` keeps its name and a prefixed
  // `github__x` from a collision is the one that moves.
  const claimOrder = [...planned].sort((a, b) => Number(a.reasons.length > 0) - Number(b.reasons.length > 0));
  const taken = new Set<string>();
  const finalName = new Map<Entry, string>();
  for (const p of claimOrder) {
    let name = p.name;
    for (let n = 1; taken.has(name); n++) {
      name = alternativeName(p.name, p.e.serverId, p.e.tool.name, n);
      if (n === 1) p.reasons.push('duplicate');
    }
    taken.add(name);
    finalName.set(p.e, name);
  }

  const tools: Tool[] = [];
  const forward = new Map<string, ToolTarget>();
  const reverse = new Map<string, string>();
  const renames: Rename[] = [];
  for (const p of planned) {
    const name = finalName.get(p.e)!;
    const { serverId } = p.e;
    const originalName = p.e.tool.name;
    const out: Tool = { ...p.e.tool, name };
    if (p.prefixed) out.description = tagDescription(p.e.tool.description, p.e.label);
    tools.push(out);
    forward.set(name, { serverId, originalName });
    // A server listing a name twice: the first (in the total order) is the reverse target.
    const key = reverseKey(serverId, originalName);
    if (!reverse.has(key)) reverse.set(key, name);
    if (name !== originalName) renames.push({ serverId, originalName, newName: name, reasons: p.reasons });
  }
  return { tools, forward, reverse, report: { collisions, renames } };
}
