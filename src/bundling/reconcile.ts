import { schemaHash } from '@notify-mcp/union';
import { alternativeName, candidateName, foldName, ownNamespaceName, PREFIX_SEPARATOR, serverHeads, type Candidate } from './names.js';
import { provenanceText } from './provenance.js';
import { DuplicateServerIdError } from './errors.js';
import type { Collision, ReconcileOptions, Reconciled, Rename, ServerBundle, Tool, ToolTarget } from './types.js';

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

/**
 * The tool as served: its name, and its description, title and `annotations.title` with the
 * upstream's own tags neutralised and, when `tagged`, the server's tag in front. The other
 * annotations (`readOnlyHint`, `destructiveHint`, …) are the upstream's claims about its own
 * tool, passed as a direct connection would show them: the tag says whose claims they are.
 */
function servedTool(tool: Tool, name: string, label: string, tagged: boolean): Tool {
  const out: Tool = { ...tool, name };
  const description = provenanceText(tool.description, label, tagged);
  if (description !== undefined) out.description = description;
  if (typeof tool.title === 'string') out.title = provenanceText(tool.title, label, tagged)!;
  if (typeof tool.annotations?.title === 'string') {
    out.annotations = { ...tool.annotations, title: provenanceText(tool.annotations.title, label, tagged)! };
  }
  return out;
}

/** Code-point order: the same everywhere, unlike localeCompare. */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Entry {
  serverId: string;
  label: string;
  tool: Tool;
  /** Only for a tool whose server lists its name more than once: the tie-break of the order. */
  hash: string;
}

interface Planned extends Candidate {
  e: Entry;
  prefixed: boolean;
}

/**
 * Who a name reads as belonging to: the servers whose head (`<serverId>__`, sanitized or
 * cut as the reconciler writes it) starts the name, the longest head winning, with case and
 * `-`/`_` folded. Undefined when the name starts with no server's head.
 */
type Claimant = (name: string) => ReadonlySet<string> | undefined;

function claimantOf(serverIds: Iterable<string>): Claimant {
  const heads = new Map<string, Set<string>>();
  for (const serverId of serverIds) {
    for (const head of serverHeads(serverId)) {
      const key = foldName(head);
      const ids = heads.get(key) ?? new Set<string>();
      ids.add(serverId);
      heads.set(key, ids);
    }
  }
  return (name) => {
    const folded = foldName(name);
    // Names are short (MAX_TOOL_NAME): few heads to look up.
    for (let i = folded.lastIndexOf(PREFIX_SEPARATOR); i > 0; i = folded.lastIndexOf(PREFIX_SEPARATOR, i - 1)) {
      const ids = heads.get(folded.slice(0, i));
      if (ids) return ids;
    }
    return undefined;
  };
}

/**
 * Merge several servers' tools into one list with unique, legal names. Only names offered
 * more than once are prefixed `<serverId>__<name>` (and get a provenance tag); names that
 * break TOOL_NAME_PATTERN are shortened deterministically. Every served name belongs
 * to the server it routes to: a name that reads as another server's (`<otherId>__…`, in any
 * case) moves into its own server's namespace, and a tool whose name another server's tool
 * already has moves into its own server's namespace, never onto another server's name.
 * Nothing is dropped: every input tool is in the output, and every collision and rename is
 * in the report. The output does not depend on the order of the bundles or of their tools.
 * Linear in the number of tools, whatever the names. `options.reserve` names servers that
 * have no bundle now (not connected yet, or down) but whose prefix is theirs all the same.
 */
export function reconcile(bundles: readonly ServerBundle[], options: ReconcileOptions = {}): Reconciled {
  const seen = new Set<string>();
  for (const b of bundles) {
    if (seen.has(b.serverId)) throw new DuplicateServerIdError(b.serverId);
    seen.add(b.serverId);
  }
  const entries = orderedEntries(bundles);
  const owners = ownersByName(entries);
  const collisions: Collision[] = [...owners]
    .filter(([, ids]) => ids.length > 1)
    .map(([name, serverIds]) => ({ name, serverIds }))
    .sort((a, b) => cmp(a.name, b.name));

  const claimant = claimantOf([...(options.reserve ?? []), ...bundles.map((b) => b.serverId)]);
  const mayServe = (name: string, serverId: string): boolean => claimant(name)?.has(serverId) ?? true;
  const planned: Planned[] = entries.map((e) => {
    const prefixed = (owners.get(e.tool.name)?.length ?? 0) > 1;
    const candidate = candidateName(e.serverId, e.tool.name, prefixed ? 'collision' : undefined);
    if (prefixed || mayServe(candidate.name, e.serverId)) return { e, prefixed, ...candidate };
    return { e, prefixed: true, ...candidateName(e.serverId, e.tool.name, 'foreign-prefix') };
  });
  const finalName = claimNames(planned, mayServe);
  return { ...served(planned, finalName, options.tagAll === true), report: { collisions, renames: renamesOf(planned, finalName) } };
}

/** Every input tool, in a total order, so ties (a server listing one name twice) break the same way. */
function orderedEntries(bundles: readonly ServerBundle[]): Entry[] {
  const entries: Entry[] = bundles.flatMap((b) =>
    b.tools.map((tool) => ({ serverId: b.serverId, label: b.label ?? b.serverId, tool, hash: '' })),
  );
  // Only those ties need the hash: the others are not hashed on every rebuild.
  const perServerName = new Map<string, number>();
  for (const e of entries) {
    const key = reverseKey(e.serverId, e.tool.name);
    perServerName.set(key, (perServerName.get(key) ?? 0) + 1);
  }
  for (const e of entries) if (perServerName.get(reverseKey(e.serverId, e.tool.name))! > 1) e.hash = schemaHash(e.tool);
  return entries.sort((a, b) => cmp(a.serverId, b.serverId) || cmp(a.tool.name, b.tool.name) || cmp(a.hash, b.hash));
}

/** Each original name, with the servers offering it (a server once per tool). */
function ownersByName(entries: readonly Entry[]): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const e of entries) {
    const ids = owners.get(e.tool.name);
    if (ids) ids.push(e.serverId);
    else owners.set(e.tool.name, [e.serverId]);
  }
  return owners;
}

/** The name each planned tool is served under: its candidate, or the first free alternative in its own space. */
function claimNames(planned: readonly Planned[], mayServe: (name: string, serverId: string) => boolean): Map<Entry, string> {
  // Untouched names claim first, so a literal `github__x` of server github keeps its name and
  // its own prefixed `github__x` from a collision is the one that moves.
  const claimOrder = [...planned].sort((a, b) => Number(a.reasons.length > 0) - Number(b.reasons.length > 0));
  const takenBy = new Map<string, string>();
  /** Per base name and tool: the next alternative to try, so k copies of a name cost k tries, not k². */
  const nextTry = new Map<string, number>();
  const finalName = new Map<Entry, string>();
  for (const p of claimOrder) {
    const { serverId } = p.e;
    const originalName = p.e.tool.name;
    const holder = takenBy.get(p.name);
    if (!p.prefixed && holder !== undefined && holder !== serverId) {
      // Another server's tool has this name: move into our own namespace instead of a hash.
      const own = candidateName(serverId, originalName, 'displaced');
      p.name = own.name;
      p.reasons = [...own.reasons, ...p.reasons.filter((r) => !own.reasons.includes(r))];
      p.prefixed = true;
    }
    const inOwnSpace = mayServe(p.name, serverId);
    const key = `${p.name}\0${serverId}\0${originalName}`;
    let n = nextTry.get(key) ?? 0;
    const nth = (k: number) =>
      k === 0 ? p.name : inOwnSpace ? alternativeName(p.name, serverId, originalName, k) : ownNamespaceName(serverId, originalName, k);
    let name = nth(n);
    while (takenBy.has(name) || !mayServe(name, serverId)) name = nth(++n);
    nextTry.set(key, n + 1);
    if (n > 0) p.reasons.push('duplicate');
    takenBy.set(name, serverId);
    finalName.set(p.e, name);
  }
  return finalName;
}

/** The served list and both routing maps, in the planned (total) order. */
function served(planned: readonly Planned[], finalName: ReadonlyMap<Entry, string>, tagAll: boolean): Omit<Reconciled, 'report'> {
  const tools: Tool[] = [];
  const forward = new Map<string, ToolTarget>();
  const reverse = new Map<string, string>();
  for (const p of planned) {
    const name = finalName.get(p.e)!;
    const { serverId } = p.e;
    const originalName = p.e.tool.name;
    tools.push(servedTool(p.e.tool, name, p.e.label, p.prefixed || tagAll));
    forward.set(name, { serverId, originalName });
    // A server listing a name twice: the first (in the total order) is the reverse target.
    const key = reverseKey(serverId, originalName);
    if (!reverse.has(key)) reverse.set(key, name);
  }
  return { tools, forward, reverse };
}

function renamesOf(planned: readonly Planned[], finalName: ReadonlyMap<Entry, string>): Rename[] {
  return planned.flatMap((p) => {
    const name = finalName.get(p.e)!;
    const { serverId } = p.e;
    const originalName = p.e.tool.name;
    return name !== originalName ? [{ serverId, originalName, newName: name, reasons: p.reasons }] : [];
  });
}
