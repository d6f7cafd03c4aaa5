/**
 * Tool results in one shape for every tool: the structured object is also the text (as
 * JSON); failures are `isError: true` results whose structuredContent is
 * `{ error, issues }`, never JSON-RPC errors, so a model can read and fix its call.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { errors, NotifyError, type ToolErrorBody } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { StoreUnavailableError } from '../store/errors.js';
import { describeValue, type ValidationFailure } from '@notify-mcp/union';

export function okResult(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

export function errorResult(error: ToolErrorBody, issues: ToolErrorBody[] = [error], omitted = 0): CallToolResult {
  const structured = omitted > 0 ? { error, issues, issues_omitted: omitted } : { error, issues };
  return {
    content: [{ type: 'text', text: `${error.message}\n${JSON.stringify(structured)}` }],
    structuredContent: structured,
    isError: true,
  };
}

/** Validation issues, with the variant reported under the discriminator's name (`via`). */
export function invalidResult(failure: Pick<ValidationFailure, 'issues' | 'omitted'>, discriminator = 'via'): CallToolResult {
  const bodies = failure.issues.map(({ variant, ...rest }) => (variant ? { ...rest, [discriminator]: variant } : rest) as ToolErrorBody);
  return errorResult(bodies[0]!, bodies, failure.omitted);
}

/** NotifyError → its result; a store that is down → STORE_UNAVAILABLE; anything else is a bug: logged, and answered INTERNAL_ERROR. */
export function failureResult(err: unknown, log: Logger, tool: string): CallToolResult {
  if (err instanceof NotifyError) return errorResult(err.toBody());
  if (err instanceof StoreUnavailableError) {
    // Transient, not a bug: the call did not get through to the database.
    log.warn('store unavailable', { tool, store: err.store, reason: err.reason });
    return errorResult(errors.storeUnavailable(err.retryAfterS, undefined, err).toBody());
  }
  // A thrown non-Error may be anything, even client data: never coerce it.
  log.error('tool failed unexpectedly', { tool, error: err instanceof Error ? err.stack : describeValue(err) });
  return errorResult(errors.internalError().toBody());
}

const errorBodySchema = {
  type: 'object',
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    path: { type: 'string' },
    via: { type: 'string' },
    retry_after_s: { type: 'number' },
    resets_at: { type: 'string', format: 'date-time' },
    notification_id: { type: 'string' },
  },
  required: ['code', 'message'],
};

/**
 * Every outputSchema admits this shape too: SDK 1.x clients, which many hosts still run,
 * validate structuredContent against the outputSchema even when isError is true;
 * the v2 client no longer does.
 */
export function withErrorShape(result: { properties: Record<string, unknown>; required: string[] }): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      ...result.properties,
      error: errorBodySchema,
      issues: { type: 'array', items: errorBodySchema },
      issues_omitted: { type: 'integer', description: 'problems found beyond those listed in issues' },
    },
    anyOf: [{ required: result.required }, { required: ['error'] }],
  };
}
