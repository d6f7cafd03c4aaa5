import { isSpecType, type Transport } from '@modelcontextprotocol/client';

/**
 * How deep a tool definition may nest (objects and arrays, the tool itself level 1). Real
 * schemas stay far below; the SDK's validation of a tools/list result recurses per level
 * and overflows the stack near 2,000, taking every tool of the list with it.
 */
export const MAX_TOOL_DEPTH = 64;

/** Tools kept from one upstream's list (all its pages); the rest are left out, and logged. */
export const MAX_TOOLS_PER_UPSTREAM = 2_000;
/** Characters of keys and strings kept from one upstream's list, about its size in bytes. */
export const MAX_TOOL_LIST_CHARS = 16 * 1024 * 1024;

/** Characters of every key and string in `value` (about its JSON size). Walks without recursion. */
export function textSize(value: unknown): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length;
    else if (typeof v === 'object' && v !== null) {
      if (Array.isArray(v)) stack.push(...v);
      else {
        for (const [k, child] of Object.entries(v)) {
          size += k.length;
          stack.push(child);
        }
      }
    } else size += 4;
  }
  return size;
}

/** True when `value` nests deeper than `max` levels. Walks without recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Why the gateway will not serve this tool, or undefined when it will. */
export function toolProblem(tool: unknown): string | undefined {
  if (nestsDeeperThan(tool, MAX_TOOL_DEPTH)) return `its definition nests deeper than ${MAX_TOOL_DEPTH} levels`;
  if (!isSpecType.Tool(tool)) return 'it is not a valid MCP tool definition';
  return undefined;
}

/** A tool's name as a log line quotes it: the upstream's text, clipped. */
export function toolLabel(tool: unknown): string {
  const name = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined;
  if (typeof name !== 'string') return '(no name)';
  return name.length > 100 ? `${name.slice(0, 100)}…` : name;
}

export interface ToolListScreen {
  /** A tool left out, with the reason. */
  onRefused(tool: string, reason: string): void;
  /** The list was cut at a bound: `kept` tools kept, the rest and any further pages left out. */
  onCut(kept: number, reason: string): void;
}

export interface ToolListBounds {
  maxTools: number;
  maxChars: number;
}

const DEFAULT_BOUNDS: ToolListBounds = { maxTools: MAX_TOOLS_PER_UPSTREAM, maxChars: MAX_TOOL_LIST_CHARS };

/** Where one listing (its first page and the pages after it) stands against the bounds. */
interface Listing {
  tools: number;
  chars: number;
  cut: boolean;
}

/**
 * The tools/list result page with every tool the gateway refuses left out, and, once the
 * listing passes a bound, the rest of the page and its `nextCursor` too (so no further
 * page is asked for).
 */
export function screenToolListPage<M>(message: M, listing: Listing, bounds: ToolListBounds, screen: ToolListScreen): M {
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null) return message;
  const tools = (result as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return message;
  const kept: unknown[] = [];
  let cutHere = false;
  for (const tool of tools) {
    if (listing.cut) {
      cutHere = true;
      break;
    }
    const problem = toolProblem(tool);
    if (problem !== undefined) {
      screen.onRefused(toolLabel(tool), problem);
      continue;
    }
    const chars = textSize(tool);
    if (listing.tools + 1 > bounds.maxTools || listing.chars + chars > bounds.maxChars) {
      listing.cut = cutHere = true;
      const reason =
        listing.tools + 1 > bounds.maxTools ? `more than ${bounds.maxTools} tools` : `more than ${bounds.maxChars} characters of tools`;
      screen.onCut(listing.tools, reason);
      break;
    }
    listing.tools++;
    listing.chars += chars;
    kept.push(tool);
  }
  const hasCursor = (result as { nextCursor?: unknown }).nextCursor !== undefined;
  if (kept.length === tools.length && !(listing.cut && hasCursor)) return message;
  const { nextCursor: _dropped, ...rest } = result as Record<string, unknown>;
  return { ...message, result: { ...(cutHere || listing.cut ? rest : result), tools: kept } };
}

/**
 * Screens the upstream's tools/list answers before the SDK client sees them: a tool it
 * would refuse, or choke on, is left out, so one bad tool costs only itself; and one
 * listing (all its pages) is bounded in tools and size. Requests are followed through
 * `send`, so only answers to tools/list are touched.
 */
export function screenToolLists(transport: Transport, screen: ToolListScreen, bounds: ToolListBounds = DEFAULT_BOUNDS): void {
  const listIds = new Set<string | number>();
  let listing: Listing = { tools: 0, chars: 0, cut: false };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as { id?: string | number; method?: string; params?: { cursor?: unknown } };
    if (m.method === 'tools/list' && m.id !== undefined) {
      listIds.add(m.id);
      if (m.params?.cursor === undefined) listing = { tools: 0, chars: 0, cut: false }; // a new listing
    }
    return send(message, options);
  };
  let handler: Transport['onmessage'];
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => handler,
    set: (next: Transport['onmessage']) => {
      handler =
        next &&
        ((message, extra) => {
          const id = (message as { id?: string | number }).id;
          if (id === undefined || !listIds.delete(id)) return next(message, extra);
          next(screenToolListPage(message, listing, bounds, screen), extra);
        });
    },
  });
}
