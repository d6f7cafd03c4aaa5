/**
 * What a tool is, independent of profile and transport: a zod input, a JSON output schema,
 * annotations, and a handler that returns structured content or throws NotifyError.
 * src/mcp/server.ts turns these into tools/list entries (shaped by the profile) and answers
 * tools/call. `send_notification` is not one of these: its input is a union, and the
 * union library shapes it (src/mcp/tools/send-notification.ts).
 */
import type { z } from 'zod';
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import type { ConfiguredChannel } from '../channels/channel.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../core/log.js';
import type { ApprovalRequest, ApprovalRound } from '../notification/approval.js';
import type { AnswerWaits } from '../notification/answer-waits.js';
import type { Caller } from '../notification/own.js';
import type { PipelineDeps } from '../notification/pipeline.js';
import type { AnswersPort } from '../store/ports/answers.js';
import type { BannersPort } from '../store/ports/banners.js';
import type { DeliveriesPort } from '../store/ports/deliveries.js';
import type { OutboxPort } from '../store/ports/outbox.js';

export interface ToolContext {
  /** The ports the tools read and write directly (a send goes through `deps`). */
  store: DeliveriesPort & OutboxPort & BannersPort & Pick<AnswersPort, 'getQuestion'>;
  /** This process's waits for answers (get_notification's wait_s); absent: wait_s answers at once. */
  answerWaits?: AnswerWaits;
  config: Config;
  log: Logger;
  /** Authenticated client name (HTTP) or clientInfo.name (stdio), when known. */
  client: string | null;
  /** The HTTP token is an operator's (NOTIFY_OPERATOR_CLIENTS): it may read every client's notifications. */
  operator?: boolean;
  now: () => number;
  signal: AbortSignal;
  /** Sends an MCP progress notification when the caller asked for progress. */
  progress?: (progress: number, total: number | undefined, message: string) => Promise<void>;
  /** The pipeline's dependencies (the connected channels): what the use cases run over. */
  deps: SendDeps;
  /** The approval step's view of this round, and how to put a question to the person (src/mcp/approval-round.ts). */
  approval?: { round: ApprovalRound; ask(request: ApprovalRequest): Promise<CallToolResult> };
}

/** Who calls, as the use cases see it. */
export function callerOf(ctx: ToolContext): Caller {
  return { client: ctx.client, operator: ctx.operator === true, signal: ctx.signal, approval: ctx.approval?.round };
}

/**
 * A handler's answer when a person must approve first (an edit the approval rules cover): the
 * tool puts the question to them, as a send does, instead of a result.
 */
export class AskFirst {
  constructor(readonly request: ApprovalRequest) {}
}

export interface ObjectToolSpec<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: Input;
  /** JSON Schema with root `type: "object"`; it must admit the error shape too: SDK clients validate errors against it. */
  outputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
  handler(args: z.infer<Input>, ctx: ToolContext): Promise<Record<string, unknown> | AskFirst>;
}

/** The pipeline's dependencies, and the channels as configured (what a sent notification means). */
export type SendDeps = PipelineDeps & { config: { channels: readonly ConfiguredChannel[] } };

/** One tool as tools/list shows it under a profile, and how it answers tools/call. */
export interface ToolEntry {
  tool: Tool;
  /**
   * Answers a tools/call with whatever `arguments` the client sent (any JSON value, or
   * nothing): always a result, a coded `isError` one for bad input, never a rejection.
   */
  call(args: unknown, ctx: ToolContext): Promise<CallToolResult>;
}
