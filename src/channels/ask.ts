/**
 * `ask`, which every branch takes (defineChannel adds it beside `urgent`): the send asks its
 * recipients a question, answered through links (DESIGN section 11). Without `choices` it
 * is an acknowledgement. Written once here: the union merges it across branches for free.
 */
import { z } from 'zod';
import type { AnswerLinker } from '../core/answer-token.js';

/** A question's life when `expires_in_s` is absent (a day); counted from when the message left. */
export const DEFAULT_EXPIRES_IN_S = 86_400;
/** The one choice of an acknowledgement. */
export const ACKNOWLEDGE = 'Acknowledge';

/**
 * The limits, checked by refinement rather than schema keywords (which cost 65 tokens on
 * every send tool), and said to the model once as ASK_LIMITS: issue 40 wants every limit the
 * validator enforces visible, in the schema or the description.
 */
export const ASK_LIMITS = '≤5 choices of ≤40 characters; expires_in_s 60-604,800';
const CHOICES_RULE = 'ask.choices takes 1-5 choices of 1-40 characters each';
const EXPIRY_RULE = 'ask.expires_in_s is an integer from 60 to 604800 (7 days); default 86400';

export const ask = z
  .strictObject({
    choices: z
      .array(z.string())
      .refine((c) => c.length >= 1 && c.length <= 5 && c.every((x) => x.length >= 1 && x.length <= 40), CHOICES_RULE)
      .optional(),
    expires_in_s: z
      .number()
      .refine((s) => Number.isInteger(s) && s >= 60 && s <= 604_800, EXPIRY_RULE)
      .optional(),
  })
  .optional();

export type Ask = NonNullable<z.output<typeof ask>>;

/** The configured escalation policies' names, each with its longest step delay in seconds (NOTIFY_ESCALATIONS). */
export type EscalationDelays = ReadonlyMap<string, number>;

/**
 * `escalate`, beside `ask` on every branch: an enum of the configured policies' names, and no
 * field at all when none is configured. Bare (no description): the name says it, and each
 * word of schema costs every model context (issue 39's budget: 15 tokens).
 */
export function escalateField(escalations: EscalationDelays): { escalate?: z.ZodOptional<z.ZodEnum<Record<string, string>>> } {
  const names = [...escalations.keys()];
  return names.length === 0 ? {} : { escalate: z.enum(names as [string, ...string[]]).optional() };
}

/** The question a call asks: its own `ask`, or the acknowledgement `escalate` implies. */
export function askOf(call: { ask?: Ask; escalate?: string }): Ask | undefined {
  return call.ask ?? (call.escalate !== undefined ? {} : undefined);
}

/** What a question offers and how long it lives, defaults applied. */
export function questionOf(a: Ask): { choices: string[]; expires_in_s: number } {
  return { choices: a.choices ?? [ACKNOWLEDGE], expires_in_s: a.expires_in_s ?? DEFAULT_EXPIRES_IN_S };
}

/** What a channel's payload building is given when the call asks: the choices, and the one link the message carries. */
export interface AnswerLink {
  choices: readonly string[];
  url: string;
}

/** Why a call with `ask` is refused when this server has no public address for its links. */
export const NO_PUBLIC_URL =
  'ask needs answer links, and links need NOTIFY_PUBLIC_URL: set it to the base URL people reach this server at ' +
  '(e.g. https://notify.example.com), or drop ask';

/**
 * Where a channel's answer link goes into a limited text field: the field, its limit in
 * characters, and the text the link adds (the channel's one rendering of it).
 */
export interface AnswerRoom {
  field: string;
  max: number;
  line(link: AnswerLink): string;
}

/** A token as long as a real one (43 base64url characters): the room a link takes does not depend on its token. */
const TOKEN_SHAPE = 'x'.repeat(43);

/**
 * The module's own rule across fields, plus what `ask` needs at the call: NOTIFY_PUBLIC_URL
 * (without it, links cannot be made), and room for the link in a limited text field, so a
 * text near its limit is refused at the call, naming the room, never cut or refused later.
 */
export function rulesOf<C>(
  refine: ((call: C, ctx: z.RefinementCtx) => void) | undefined,
  publicUrl: string | undefined,
  room: AnswerRoom | undefined,
  check?: (call: C, link: AnswerLink) => AnswerProblem | undefined,
  escalations: EscalationDelays = new Map(),
): ((call: C & { ask?: Ask; escalate?: string }, ctx: z.RefinementCtx) => void) | undefined {
  if (publicUrl !== undefined && room === undefined && check === undefined && escalations.size === 0) return refine;
  return (call, ctx) => {
    refine?.(call, ctx);
    const asked = askOf(call);
    if (asked === undefined) return;
    if (publicUrl === undefined) {
      ctx.addIssue({ code: 'custom', path: [call.ask === undefined ? 'escalate' : 'ask'], message: NO_PUBLIC_URL });
      return;
    }
    // A bad ask is reported on its own: its choices and life are what the checks below measure with.
    if (!ask.safeParse(asked).success) return;
    if (call.escalate !== undefined) escalationFits(call.escalate, asked, escalations, ctx);
    const link = { choices: questionOf(asked).choices, url: `${publicUrl}/answer/${TOKEN_SHAPE}` };
    const problem = (room && roomProblem(call as Record<string, unknown>, room, link)) ?? check?.(call, link);
    if (problem) ctx.addIssue({ code: 'custom', ...problem, params: { code: 'TOO_LONG' } });
  };
}

/** Why a call's limits fail once its answer link is in it: where, and what to do. */
export interface AnswerProblem {
  path: (string | number)[];
  message: string;
}

function roomProblem(call: Record<string, unknown>, room: AnswerRoom, link: AnswerLink): AnswerProblem | undefined {
  const text = call[room.field];
  if (typeof text !== 'string') return undefined;
  const taken = room.line(link).length;
  if (text.length + taken <= room.max) return undefined;
  return {
    path: [room.field],
    message: `Shorten {field}: with ask, the answer link takes ${taken} of its ${room.max} characters, so it may have ${room.max - taken} (it has ${text.length}).`,
  };
}

/** A policy whose last step leaves after the question expires is refused at the call: that step could never be answered. */
function escalationFits(name: string, asked: Ask, escalations: EscalationDelays, ctx: z.RefinementCtx): void {
  const longest = escalations.get(name);
  const life = questionOf(asked).expires_in_s;
  if (longest === undefined || longest <= life) return;
  ctx.addIssue({
    code: 'custom',
    path: ['escalate'],
    message: `Policy ${name}'s last step leaves ${longest} s after the first send, after the question expires (${life} s): set ask.expires_in_s to at least ${longest}, or choose another policy.`,
  });
}

/** The link a call that asks carries; without a linker (a caller that connected without the store's key) it cannot be made. */
export function answerLink(a: Ask, id: string, links: AnswerLinker | undefined): AnswerLink {
  if (!links) throw new Error('a call with ask reached payload building without an answer linker (connect it with the store key)');
  // One link for the whole message: every channel sends one message to all its recipients.
  return { choices: questionOf(a).choices, url: links(id, '') };
}

/** A payload build's context, with the link when the call asks. Generic over a channel's call: read `ask` as the branch made it. */
export function withAnswer<T extends { id: string }>(call: unknown, ctx: T, links: AnswerLinker | undefined): T & { answer?: AnswerLink } {
  const asked = askOf(call as { ask?: Ask; escalate?: string });
  return asked ? { ...ctx, answer: answerLink(asked, ctx.id, links) } : ctx;
}
