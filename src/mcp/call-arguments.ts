/**
 * Where a tools/call's arguments travel when the inbound screen sets them aside
 * (src/transports/inbound.ts): under a private `_meta` key, past the SDK's schema, to the
 * tool that answers them with a coded result.
 */
export const ARGUMENTS_KEY = 'dev.notify-mcp/arguments';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The arguments of a tools/call as the client sent them, set aside or not. */
export function callArguments(params: { arguments?: unknown; _meta?: unknown }): unknown {
  return isObject(params._meta) && Object.hasOwn(params._meta, ARGUMENTS_KEY) ? params._meta[ARGUMENTS_KEY] : params.arguments;
}
