/**
 * get_notification: where one notification stands, read-only. A caller sees its own
 * notifications only (the token's client over HTTP, else clientInfo.name), unless its token
 * is an operator's (NOTIFY_OPERATOR_CLIENTS). Someone else's id and an unknown one get the
 * same answer, so an id's existence does not leak.
 */
import { z } from 'zod';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { errors } from '../../core/errors.js';
import { NOTIFICATION_STATES, type DeliveryRecord, type DeliveryStatus, type OutboxEntry } from '../../store/types.js';
import type { ObjectToolSpec, ToolContext } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';
import { listWords } from '@notify-mcp/union';
import { STATE_MEANINGS } from '../../notification/status.js';
import { QUESTION_OUTPUT, questionFields, waitedFields } from './question-view.js';
import { ESCALATION_OUTPUT, escalating, escalationFields } from './escalation-view.js';

/** Under the common 60 s client timeout. */
export const MAX_WAIT_S = 55;

// Any id of a plausible length is looked up: a malformed one is as unknown as a foreign one.
const input = z
  .object({
    id: z.string().min(1).max(64).meta({ description: 'ntf_… id from send_notification' }),
    // Bounds checked by refinement: schema keywords would cost every model tokens (issue 37).
    wait_s: z
      .number()
      .refine((s) => Number.isInteger(s) && s >= 0 && s <= MAX_WAIT_S, `wait_s is an integer from 0 to ${MAX_WAIT_S}`)
      .optional(),
  })
  .strict();

const iso = (ms: number) => new Date(ms).toISOString();

function visible(record: { client: string | null }, ctx: ToolContext): boolean {
  return ctx.operator === true || record.client === ctx.client;
}

function view(record: DeliveryRecord, sentMeans: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: record.id,
    via: record.via,
    status: record.status,
    status_means: record.status === 'sent' ? (sentMeans ?? 'The provider accepted the message.') : STATE_MEANINGS[record.status],
    provider: record.provider,
  };
  if (record.provider_message_id !== null) out.provider_message_id = record.provider_message_id;
  if (record.provider_status !== null) {
    out.provider_status = {
      status: record.provider_status,
      ...(record.provider_status_code !== null ? { code: record.provider_status_code } : {}),
      at: iso(record.status_updated_at),
    };
  }
  if (record.error_code !== null) out.error_code = record.error_code;
  const approval = record.approval;
  // A person's decision (or its lapse) is part of where the send stands: a bare `declined` leaves the caller guessing.
  if (approval && (approval.outcome === 'approved' || approval.outcome === 'declined' || approval.outcome === 'expired')) {
    if (approval.decided_by !== undefined) out.decided_by = approval.decided_by;
    if (approval.decided_at !== undefined) out.decided_at = iso(approval.decided_at);
    if (approval.reason !== undefined) out.reason = approval.reason;
  }
  out.attempts = record.attempt_log.map((a) => ({
    attempt: a.attempt,
    ...(a.endpoint !== undefined ? { endpoint: a.endpoint } : {}),
    outcome: a.outcome,
    ...(a.at !== undefined ? { at: iso(a.at) } : {}),
    latency_ms: a.latency_ms,
    ...(a.vendor_code !== undefined ? { vendor_code: String(a.vendor_code) } : {}),
  }));
  out.accepted_at = iso(record.created_at);
  out.updated_at = iso(record.status_updated_at);
  return out;
}

/** Where a waiting send stands, as its notification state: a release under way is still waiting; a refused one failed. */
function waitingStatus(entry: OutboxEntry): DeliveryStatus {
  switch (entry.state) {
    case 'releasing':
      return entry.send_at === entry.due_at ? 'scheduled' : 'held';
    case 'released': {
      // Released with no record (its write was lost after the provider answered): the release's own answer says where it went.
      const status = (entry.outcome as { status?: unknown } | null)?.status;
      return typeof status === 'string' && (NOTIFICATION_STATES as readonly string[]).includes(status)
        ? (status as DeliveryStatus)
        : 'unknown';
    }
    case 'scheduled':
    case 'held':
    case 'cancelled':
    case 'expired':
    case 'failed':
    case 'unknown':
      return entry.state;
  }
}

/** A send that has not left (or never will): what the outbox knows of it. */
function waitingView(entry: OutboxEntry): Record<string, unknown> {
  const status = waitingStatus(entry);
  const error = (entry.outcome as { error?: { code?: string } } | null)?.error;
  return {
    id: entry.id,
    via: entry.via,
    status,
    status_means:
      status === 'failed'
        ? 'Refused when its time came (error_code says why); nothing was sent.'
        : status === 'sent'
          ? 'Sent when its time came; its delivery record was not written, so no provider status follows.'
          : STATE_MEANINGS[status as Exclude<DeliveryStatus, 'sent'>],
    provider: 'none yet',
    ...(error?.code ? { error_code: error.code } : {}),
    attempts: [],
    accepted_at: iso(entry.created_at),
    updated_at: iso(entry.finished_at ?? entry.claimed_at ?? entry.created_at),
  };
}

/** send_at and release_at of a send that waited in the outbox. */
function timesOf(entry: OutboxEntry): Record<string, string> {
  return {
    ...(entry.send_at !== null ? { send_at: iso(entry.send_at) } : {}),
    ...(entry.send_at !== entry.due_at ? { release_at: iso(entry.due_at) } : {}),
  };
}

/** Which channels move on from sent (their provider reports back), said from their modules: `SMS later becomes delivered or undelivered; email and Slack stay sent. ` */
function receiptsSentence(channels: readonly ConfiguredChannel[]): string {
  const reporting = channels.filter((c) => c.receipts).map((c) => c.channel.label);
  const silent = channels.filter((c) => !c.receipts).map((c) => c.channel.label);
  if (!reporting.length) return '';
  return `${listWords(reporting)} later ${reporting.length > 1 ? 'become' : 'becomes'} delivered or undelivered${silent.length ? `; ${listWords(silent)} stay sent` : ''}. `;
}

/** The tool, with its output enums generated from the configured channels and the state list. */
export function getNotificationTool(channels: readonly ConfiguredChannel[]): ObjectToolSpec<typeof input> {
  const sentMeans = new Map(channels.map((c) => [c.name, c.channel.sentMeans]));
  return {
    name: 'get_notification',
    title: 'Get notification',
    description:
      // The states are the output schema's enum, and the answer says what its status means.
      "Shows a notification you sent: status and its meaning, timing, attempts, provider status, and its question's answer " +
      '(wait_s: up to 55 s for it). ' +
      receiptsSentence(channels) +
      "Another client's id is NOT_FOUND. Read-only.",
    input,
    outputSchema: withErrorShape({
      properties: {
        id: { type: 'string', description: 'notification id, ntf_…' },
        via: { type: 'string', enum: channels.map((c) => c.name) },
        status: { type: 'string', enum: [...NOTIFICATION_STATES] },
        status_means: { type: 'string', description: 'what the status means on this channel' },
        provider: { type: 'string' },
        provider_message_id: { type: 'string' },
        provider_status: {
          type: 'object',
          description: "the provider's own last word on the message",
          properties: { status: { type: 'string' }, code: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
          required: ['status', 'at'],
        },
        error_code: { type: 'string', description: 'why the send failed, when it did' },
        decided_by: { type: 'string', description: 'who approved or declined it in the console' },
        decided_at: { type: 'string', format: 'date-time', description: 'when it was approved, declined or expired unanswered' },
        reason: { type: 'string', description: "the approver's reason, when given" },
        attempts: {
          type: 'array',
          description: 'every provider call, one per failover endpoint tried, in order; empty for a dry run',
          items: {
            type: 'object',
            properties: {
              attempt: { type: 'integer' },
              endpoint: { type: 'string', description: 'where it went: SMTP relay host:port, Twilio sender, or target' },
              outcome: { type: 'string' },
              at: { type: 'string', format: 'date-time' },
              latency_ms: { type: 'number' },
              vendor_code: { type: 'string' },
            },
            required: ['attempt', 'outcome', 'latency_ms'],
          },
        },
        accepted_at: { type: 'string', format: 'date-time' },
        send_at: { type: 'string', format: 'date-time', description: 'a scheduled send: the time it was asked for' },
        release_at: { type: 'string', format: 'date-time', description: 'a send held by quiet hours: when the window ends' },
        updated_at: { type: 'string', format: 'date-time', description: 'when status or provider_status last changed' },
        ...QUESTION_OUTPUT,
        ...(escalating(channels) ? ESCALATION_OUTPUT : {}),
      },
      required: ['id', 'via', 'status', 'status_means', 'provider', 'attempts', 'accepted_at', 'updated_at'],
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async handler(args, ctx) {
      const show = async (): Promise<Record<string, unknown>> => {
        const [record, entry] = await Promise.all([ctx.store.getDelivery(args.id), ctx.store.getOutboxEntry(args.id)]);
        if (!record && entry && visible(entry, ctx))
          return {
            ...waitingView(entry),
            ...timesOf(entry),
            ...(await questionFields(ctx.store, args.id, null)),
            ...(await escalationFields(ctx.store, ctx.deps.channels, args.id)),
          };
        if (!record || !visible(record, ctx)) {
          throw errors.notYourNotification(args.id);
        }
        const shown = entry ? { ...view(record, sentMeans.get(record.via)), ...timesOf(entry) } : view(record, sentMeans.get(record.via));
        return {
          ...shown,
          ...(await questionFields(ctx.store, args.id, record)),
          ...(await escalationFields(ctx.store, ctx.deps.channels, args.id)),
        };
      };
      // Visible first: another client's id is refused at once, never waited on.
      return waitedFields(await show(), args.wait_s, ctx.answerWaits, ctx.signal, show);
    },
  };
}
