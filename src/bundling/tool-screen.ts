import { isSpecType, type Transport } from '@modelcontextprotocol/client';

/**
 * How deep a tool definition may nest (objects and arrays, the tool itself level 1). Real
 * schemas stay far below; the SDK's validation of a tools/list result recurses per level
 * and overflows the stack near 2,000, taking every tool of the list with it.
 */
export const MAX_TOOL_DEPTH = 64;

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

export type RefusedTool = (tool: string, reason: string) => void;

/** The message with every tool of a tools/list result the gateway refuses left out. */
export function screenToolList<M>(message: M, onRefused: RefusedTool): M {
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null) return message;
  const tools = (result as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return message;
  const kept: unknown[] = [];
  for (const tool of tools) {
    const problem = toolProblem(tool);
    if (problem === undefined) kept.push(tool);
    else onRefused(toolLabel(tool), problem);
  }
  return kept.length === tools.length ? message : { ...message, result: { ...result, tools: kept } };
}

/**
 * Screens what the transport hands the SDK client: a tool it would refuse, or choke on,
 * is left out of its tools/list result before the client validates the list, so one bad
 * tool costs only itself.
 */
export function screenIncomingToolLists(transport: Transport, onRefused: RefusedTool): void {
  let handler: Transport['onmessage'];
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => handler,
    set: (next: Transport['onmessage']) => {
      handler = next && ((message, extra) => next(screenToolList(message, onRefused), extra));
    },
  });
}
