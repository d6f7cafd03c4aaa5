/**
 * send_notification as MCP tools: the union's profile tools, each validated against the
 * union (whatever shape the client saw) and handed to the pipeline.
 */
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { NotifyError, type ErrorCode } from '../../core/errors.js';
import type { SendDeps, ToolContext, ToolEntry } from '../tool-kit.js';
import { failureResult, invalidResult, okResult, withErrorShape } from '../tool-result.js';
import type { ProfileTool, UnionDef, UnionProfile } from '@notify-mcp/union';
import { canonicalJson, profileTools, validateUnionCall } from '@notify-mcp/union';
import { isApprovalAsk } from '../../notification/approval.js';
import { sendEscalating } from '../../notification/escalate.js';

export type { SendDeps } from '../tool-kit.js';

export const SEND_ANNOTATIONS: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

/**
 * The send tools' output schema, generated from the channels: SDK clients validate results
 * against it after the send ran, so a `via` or a channel's result value it does not list
 * would turn a completed send into a client-side error.
 */
export function sendOutputSchema(channels: readonly ConfiguredChannel[]): Record<string, unknown> {
  const common = ['id', 'via', 'status', 'sent_means', 'provider', 'provider_message_id', 'replayed', 'accepted_at'];
  const extra: Record<string, unknown> = {};
  for (const { name, channel } of channels) {
    for (const [field, schema] of Object.entries(channel.result ?? {})) {
      const seen = extra[field];
      if (common.includes(field) || (seen !== undefined && canonicalJson(seen) !== canonicalJson(schema))) {
        throw new Error(`channel ${name} declares result field "${field}", which another channel or the result itself defines otherwise`);
      }
      extra[field] = schema;
    }
  }
  return withErrorShape({
    properties: {
      id: { type: 'string', description: 'notification id, ntf_…' },
      via: { type: 'string', enum: channels.map((c) => c.name) },
      status: {
        type: 'string',
        enum: ['sent', 'dry_run', 'scheduled', 'held', 'pending_approval'],
        description: 'pending_approval: held for a person in the operator console; nothing sent yet (get_notification shows the decision)',
      },
      send_at: { type: 'string', format: 'date-time', description: 'with status scheduled or held: the time the call asked for' },
      release_at: { type: 'string', format: 'date-time', description: 'with status held: when quiet hours end and it is sent' },
      sent_means: { type: 'string', description: 'with status sent: how far the message got on its channel' },
      provider: { type: 'string' },
      provider_message_id: { type: 'string' },
      ...extra,
      replayed: { type: 'boolean' },
      accepted_at: { type: 'string', format: 'date-time' },
    },
    required: ['id', 'via', 'status', 'provider', 'accepted_at'],
  });
}

/** What a send needs of the tool context: who is calling, its log, a way to report progress, and its cancellation. */
export type SendCallContext = Pick<ToolContext, 'client' | 'progress' | 'log'> & Partial<Pick<ToolContext, 'signal' | 'approval'>>;

/** Sends that policy refused; each is logged (its log carries tool and client; never the body). */
const POLICY_REFUSALS: ReadonlySet<ErrorCode> = new Set([
  'RECIPIENT_NOT_ALLOWED',
  'RECIPIENT_OPTED_OUT',
  'RATE_LIMITED',
  'IDEMPOTENCY_CONFLICT',
  'APPROVAL_REQUIRED',
  'APPROVAL_DECLINED',
  'CAP_REACHED',
]);

/**
 * The send tools of one profile: one `send_notification`, or one per channel, named and
 * shaped by the union library; each call validated against the union whatever shape the
 * client saw, then sent.
 */
export function sendTools(def: UnionDef, profile: UnionProfile, outputSchema: Tool['outputSchema']): ToolEntry[] {
  return profileTools(def, profile).map((pt) => ({
    tool: {
      name: pt.name,
      title: pt.title,
      description: pt.description,
      inputSchema: pt.inputSchema as Tool['inputSchema'],
      outputSchema,
      annotations: { title: pt.title, ...SEND_ANNOTATIONS },
    },
    call: (args, ctx) => callSendTool(def, pt, ctx.deps, args, ctx),
  }));
}

export async function callSendTool(
  def: UnionDef,
  tool: ProfileTool,
  deps: SendDeps,
  args: unknown,
  ctx: SendCallContext,
): Promise<CallToolResult> {
  const checked = validateUnionCall(def, tool.binding, args);
  if (!checked.ok) return invalidResult(checked, def.discriminator);
  try {
    const answer = await sendEscalating(deps, checked.variant, checked.value, {
      client: ctx.client,
      tool: tool.name,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.approval ? { approval: ctx.approval.round } : {}),
      onRetry: ctx.progress
        ? (attempt, delayMs, reason) =>
            void ctx.progress!(attempt, undefined, `attempt ${attempt} failed (${reason}); retrying in ${delayMs} ms`).catch(() => {})
        : undefined,
    });
    // A question only comes to a client that can ask (ctx.approval.round.canAsk).
    if (isApprovalAsk(answer)) {
      if (!ctx.approval) throw new Error(`${tool.name} asked a person without an approval round`);
      return await ctx.approval.ask(answer.request);
    }
    const result = answer;
    const sentMeans = result.status === 'sent' ? deps.config.channels.find((c) => c.name === result.via)?.channel.sentMeans : undefined;
    return okResult(sentMeans === undefined ? { ...result } : { ...result, sent_means: sentMeans });
  } catch (err) {
    if (err instanceof NotifyError && POLICY_REFUSALS.has(err.code)) {
      ctx.log.warn('send refused', {
        code: err.code,
        via: err.details.via ?? null,
        client: ctx.client,
        recipients: err.details.recipientClasses ?? [],
      });
    }
    return failureResult(err, deps.log, tool.name);
  }
}
