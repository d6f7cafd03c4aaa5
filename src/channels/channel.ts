/**
 * What a channel is: one module (src/channels/<name>/index.ts) holding everything it knows,
 * and defineChannel, which checks at compile time that its parts fit, so the pipeline can
 * carry a call to its provider without a cast.
 */
import { z } from 'zod';
import type { Check, CheckContext } from '../core/check.js';
import type { AnswerLinker } from '../core/answer-token.js';
import { deepFreeze, publicBaseUrl, type Env } from '../core/env.js';
import { readAllowlist, type Allowlist } from '../policy/allowlist.js';
import type { RecipientMatcher } from '../policy/matcher.js';
import { dryRunProvider } from '../providers/dry-run.js';
import {
  ask,
  ASK_LIMITS,
  escalateField,
  rulesOf,
  withAnswer,
  type AnswerLink,
  type AnswerProblem,
  type AnswerRoom,
  type Ask,
  type EscalationDelays,
} from './ask.js';
import { checkChannel } from './doctor-lines.js';
import type { InboundCallback, InboundModule, InboundPath } from './inbound.js';
import { isLive, only, type ChannelSettings, type LiveSettings } from './settings.js';
import type { Provider } from '../providers/types.js';
import type { BuiltPayload, Forwarded, Notice, ProviderContext, ReceiptReading, ResultMeta, Summary } from './channel-parts.js';

export type { InboundCallback } from './inbound.js';
// A channel's parts, named where channels are: every type of ./channel-parts.ts, listed once there.
export type * from './channel-parts.js';
import { parsedWith, type FormatWords, type JsonSchema } from '@notify-mcp/union';

/** Every branch takes it besides its own fields: the same key and payload send once. */
export const idempotencyKey = z.string().min(1).max(128).optional();

/**
 * Every branch takes them too: when to send (RFC 3339, Z or an offset; how far ahead is the
 * pipeline's to bound), and whether it may pass quiet hours. The words ask for a Z time: some
 * clients (mcp-use) turn date-time into a pattern that takes only Z; offsets stay accepted. */
export const sendAt = z.iso.datetime({ offset: true }).optional().meta({ description: 'UTC (Z), ≤30 days ahead' });
export const urgent = z.boolean().optional().meta({ description: 'may pass quiet hours if allowed' });

/** Channel V's union branch: `via`, the channel's own fields, then `idempotency_key`, `send_at`, `urgent`, `ask`; closed. */
export type Branch<V extends string, Shape extends z.ZodRawShape> = z.ZodObject<
  { via: z.ZodLiteral<V> } & Shape & {
      idempotency_key: typeof idempotencyKey;
      send_at: typeof sendAt;
      urgent: typeof urgent;
      ask: typeof ask;
    },
  z.core.$strict
>;

/** A call of channel V as the union validated it. */
export type CallOf<V extends string, Shape extends z.ZodRawShape> = z.output<Branch<V, Shape>>;

/**
 * A channel as its author writes it. Type parameters are inferred by defineChannel: V the
 * `via` value, K the variables it reads, S its settings, Shape its branch's own fields, P its
 * provider's payload.
 */
export interface ChannelModule<V extends string, K extends string, S extends ChannelSettings, Shape extends z.ZodRawShape, P> {
  /** The `via` value; it also names the per-channel tool (send_<name>) and the metrics label. */
  name: V;
  /** How a sentence names it: `email`, `SMS`, `Slack`. */
  label: string;
  /** Every environment variable settings() reads besides the allowlist's (.env.example lists them); `PREFIX_*`: a family. */
  variables: readonly K[];
  /** Reads the settings; a value it cannot use is a ConfigError that says what to set. */
  settings(env: Env<K>): S;
  /** The recipient allowlist: its variable, and how its entries read and match recipients. */
  allowlist: { variable: string; matcher: RecipientMatcher };
  /**
   * The branch under these settings: its own fields (`via` and `idempotency_key` are added),
   * one sentence on what it does (the tool description), and limits by field only where the
   * schema cannot state them (a refinement's rule); every other limit is generated from the
   * zod checks, in the description and in errors.
   */
  branch(settings: S): {
    fields: Shape;
    description: string;
    limits?: { readonly [F in keyof Shape & string]?: string };
    /** A rule across fields (email: recipients in all), checked after each field passed its own. */
    refine?: (call: NoInfer<z.output<z.ZodObject<Shape>>>, ctx: z.RefinementCtx) => void;
    /** With `ask`: whether the call's limits still hold with the answer link in its message (a link as long as a real one). */
    answerCheck?: (call: NoInfer<z.output<z.ZodObject<Shape>>>, link: AnswerLink) => AnswerProblem | undefined;
  };
  /** A limited text field the answer link of a call that asks is added to (Slack: text): checked at the call. */
  answerRoom?: AnswerRoom;
  /** JSON Schema of the properties `meta` adds to a result, for the output schema. */
  result?: Readonly<Record<string, JsonSchema>>;
  /**
   * What a `sent` result means on this channel, in one sentence: how far the message got, and
   * whether a later state can follow (the tool description and every sent result say it).
   */
  sentMeans: string;
  /** Receipts the provider posts back to POST /webhooks/<path>; a channel without them stays at `sent`. */
  receipts?: { path: string; read(settings: S, callback: InboundCallback): Promise<ReceiptReading> };
  /**
   * What people send back (a Slack click, an SMS reply) is posted to `path` (from the server's
   * root); `read` verifies it and says what it is (./inbound.ts). `nowMs`: for a signature's age.
   */
  inbound?: InboundModule<S>;
  /** The zod string formats its fields use, in words with an example, for error advice. */
  formats?: Readonly<Record<string, FormatWords>>;
  /** Every recipient a call names: each must pass the allowlist and the opt-out list. */
  recipients(call: CallOf<V, Shape>): string[];
  /**
   * What a refusal's log line says of a recipient: its class, never the address (email: the
   * domain; SMS: the country-code prefix). Without it, the channel's name.
   */
  recipientClass?(recipient: string): string;
  /**
   * `notify-mcp doctor` for a live channel: credentials and reachability, and that what the
   * settings name (a sender, the allowlisted destinations) exists; never sends anything.
   * Loaded on demand like the provider.
   */
  check?(settings: LiveSettings<S>, allow: Allowlist | undefined, ctx: CheckContext): Promise<Check[]>;
  /**
   * `timeoutMs`: how long building may take (it counts against the send's budget). The same
   * call, `id` and `at` (the message's time) must build the same payload: an approval is
   * bound to its hash, and the approved send builds it again. `answer`: the call asks, and
   * the message carries this link (derived from `id`, so it is rebuilt alike too).
   */
  buildPayload(
    call: CallOf<V, Shape>,
    ctx: { id: string; settings: S; timeoutMs: number; at?: number; answer?: AnswerLink },
  ): Promise<BuiltPayload<P>>;
  /** The live provider; loaded here, on demand, so a dry-run start imports no vendor SDK. */
  createProvider(settings: LiveSettings<S>, ctx: ProviderContext): Promise<Provider<P>>;
  /**
   * What a person approving a send reads besides channel and recipients: the subject or first
   * line, and the body whose size is shown. Without it, the call's own JSON.
   */
  summary?(call: CallOf<V, Shape>): Summary;
  /**
   * Approval rules only this channel can judge (NOTIFY_APPROVAL names them): true when the
   * call needs a person's approval under these settings (Slack: `broadcast`).
   */
  approvalRules?: { readonly [rule: string]: (call: CallOf<V, Shape>, settings: S) => boolean };
  /** Measures NOTIFY_CAPS may name besides the channel's own (messages): how much of each one send uses. */
  capMeasures?: { readonly [measure: string]: (call: CallOf<V, Shape>, meta: ResultMeta | undefined) => number };
  /**
   * A posted message this channel can change (edit_notification): the call that sends
   * `change` in its place, from the payload as recorded. Without it, a sent message of this
   * channel cannot be edited.
   */
  editCall?(posted: P, change: { text: string; blocks?: unknown[] | undefined }): z.input<Branch<V, Shape>>;
  /**
   * A send not yet sent (scheduled, held, waiting for approval) that edit_notification
   * changes: the call with `change` in place of its message text. Without it, such a send
   * of this channel cannot be edited.
   */
  editWaiting?(call: CallOf<V, Shape>, change: { text: string; blocks?: unknown[] | undefined }): z.input<Branch<V, Shape>>;
  /**
   * The call that posts a notice to the approvers at `to` (NOTIFY_APPROVAL_NOTIFY=<name>:<to>).
   * Without it, notices cannot go through this channel.
   */
  notice?(to: string, notice: Notice): z.input<Branch<V, Shape>>;
  /**
   * The call that carries another send's message to `to` (an escalation step,
   * NOTIFY_ESCALATIONS=<name>=<channel>:<to>@<delay>): the subject where the channel has one,
   * and the text, shortened to what its branch takes. Without it, no step goes through this channel.
   */
  forward?(to: string, message: Forwarded): z.input<Branch<V, Shape>>;
  /** Valid calls, simplest first: the test fixtures loop over them. */
  examples: readonly [z.input<Branch<V, Shape>>, ...z.input<Branch<V, Shape>>[]];
}

/** A channel with its types sealed in: what a registry lists. */
export interface Channel {
  readonly name: string;
  readonly label: string;
  readonly variables: readonly string[];
  readonly allowlist: { readonly variable: string; readonly matcher: RecipientMatcher };
  readonly result?: Readonly<Record<string, JsonSchema>>;
  readonly sentMeans: string;
  readonly formats?: Readonly<Record<string, FormatWords>>;
  readonly examples: readonly Readonly<Record<string, unknown>>[];
  /** The names of the approval rules it declares. */
  readonly approvalRuleNames: readonly string[];
  /** The cap measures it declares (ChannelModule.capMeasures). */
  readonly capMeasureNames: readonly string[];
  /** The call of a notice to the approvers (ChannelModule.notice), unparsed. */
  readonly notice?: (to: string, notice: Notice) => Readonly<Record<string, unknown>>;
  /** The call of an escalation step (ChannelModule.forward), unparsed. */
  readonly forward?: (to: string, message: Forwarded) => Readonly<Record<string, unknown>>;
  /**
   * Reads its settings and allowlist from `env` (config.ts hands it in); `escalations`: the
   * configured policies' names and longest delays (s), for the branch's `escalate`.
   */
  configure(env: Env, escalations?: EscalationDelays): ConfiguredChannel;
}

/** A channel configured from an environment; nothing is connected yet (`notify-mcp schema` stops here). */
export interface ConfiguredChannel {
  readonly channel: Channel;
  readonly name: string;
  readonly live: boolean;
  readonly allow: Allowlist | undefined;
  /** Its settings, frozen; credentials included, so never logged whole. */
  readonly settings: ChannelSettings;
  /** Its union branch under these settings, with `.meta({ description, limits })`. */
  readonly branch: z.ZodObject;
  /** Its provider's receipts, read under these settings. */
  readonly receipts?: { readonly path: string; read(callback: InboundCallback): Promise<ReceiptReading> };
  /** Where people's replies arrive, read under these settings (ChannelModule.inbound). */
  readonly inbound?: InboundPath;
  /** Its `notify-mcp doctor` lines: dry-run or live, its allowlist, and a live channel's own checks. */
  check(ctx: CheckContext): Promise<Check[]>;
  /**
   * Gives it its provider: live with credentials, dry-run without; `provider` replaces either
   * (tests). `links` makes the answer link of a call that asks (the store's key; app.ts).
   */
  connect(ctx: ProviderContext, provider?: Provider<unknown>, links?: AnswerLinker): Promise<ConnectedChannel>;
}

/** A configured channel with its provider. */
export interface ConnectedChannel {
  readonly name: string;
  readonly live: boolean;
  readonly providerName: string;
  /** Calls `use` with the channel's types intact: there a call, its payload and its provider line up. */
  open<R>(use: <C, P>(channel: TypedChannel<C, P>) => R): R;
  /** Closes the provider it created (not one it was given). */
  close(): Promise<void>;
}

/** One channel, opened: C its calls, P its payload. */
export interface TypedChannel<C, P> {
  readonly name: string;
  readonly live: boolean;
  readonly allow: Allowlist | undefined;
  readonly allowVariable: string;
  readonly matcher: RecipientMatcher;
  readonly provider: Provider<P>;
  /** Its provider posts receipts (the module declares `receipts`): one may outrun a send's record. */
  readonly takesReceipts: boolean;
  /**
   * The call with its type: the union's validation already parsed it with this branch
   * (taken as it is, not parsed twice), anything else is parsed here.
   */
  parse(value: unknown): C;
  recipients(call: C): string[];
  /** A recipient's class for logs (ChannelModule.recipientClass). */
  recipientClass(recipient: string): string;
  /** `at`: the message's time (the email's Date header), so that the same call, id and time build the same bytes. */
  buildPayload(call: C, id: string, timeoutMs: number, at: number): Promise<BuiltPayload<P>>;
  summary(call: C): Summary;
  /** Whether the channel's approval rule `rule` applies to the call; false for a rule it does not declare. */
  approvalRule(rule: string, call: C): boolean;
  /** How much of cap measure `measure` the call uses: 1 of the channel's own name, a declared measure's count, else undefined. */
  capAmount(measure: string, call: C, meta: ResultMeta | undefined): number | undefined;
  /** Parses a value with the branch without throwing: the call, or zod's issues. */
  branchOf(value: unknown): { success: true; data: C } | { success: false; error: z.ZodError };
  /** The call an edit of a posted message makes (ChannelModule.editCall), unparsed; undefined when the channel cannot edit. */
  editCall(posted: unknown, change: { text: string; blocks?: unknown[] | undefined }): unknown;
  /** The call an edit of a send not yet sent makes (ChannelModule.editWaiting), unparsed; undefined when the channel cannot edit one. */
  editWaiting(call: C, change: { text: string; blocks?: unknown[] | undefined }): unknown;
  /** The call of an escalation step to `to` (ChannelModule.forward), unparsed; undefined when the channel forwards nothing. */
  forward(to: string, message: Forwarded): unknown;
}

/** A summary for a channel that declares none: its call as JSON, without `via`. */
function firstLineOf(call: unknown): Summary {
  const { via: _via, idempotency_key: _key, ...rest } = call as Record<string, unknown>;
  const body = JSON.stringify(rest);
  return { headlineLabel: 'Call', headline: body.slice(0, 120), body };
}

/** Channel `name`'s closed branch: `via`, its own fields, then what every branch takes (`escalate` only where a policy is configured: it costs a model nothing otherwise). */
function closedBranch<V extends string, Shape extends z.ZodRawShape>(name: V, fields: Shape, escalations: EscalationDelays) {
  return z.strictObject({
    via: z.literal(name),
    ...fields,
    idempotency_key: idempotencyKey,
    send_at: sendAt,
    urgent,
    ask,
    ...escalateField(escalations),
  });
}

/** A module's inbound path, read under its settings (ConfiguredChannel.inbound). */
function inboundOf<S>(inbound: InboundModule<S> | undefined, settings: S): { inbound?: InboundPath } {
  return inbound ? { inbound: { path: inbound.path, read: (cb, now) => inbound.read(settings, cb, now) } } : {};
}

/**
 * Checks a channel module's parts against each other, and seals it for the registry: the call
 * its branch accepts is what recipients() and buildPayload() take, the payload buildPayload()
 * returns is what its provider sends, and settings() reads only the variables it declares.
 * Configured from an environment (ConfiguredChannel) and given a provider (ConnectedChannel),
 * a channel is opened again only through `open`, whose callback receives it with its types
 * intact.
 */
export function defineChannel<const V extends string, const K extends string, S extends ChannelSettings, Shape extends z.ZodRawShape, P>(
  module: ChannelModule<V, K, S, Shape, P>,
): ChannelModule<V, K, S, Shape, P> & Channel {
  const channel: ChannelModule<V, K, S, Shape, P> & Channel = {
    ...module,
    approvalRuleNames: Object.keys(module.approvalRules ?? {}),
    capMeasureNames: Object.keys(module.capMeasures ?? {}),
    configure(env: Env, escalations: EscalationDelays = new Map()): ConfiguredChannel {
      const settings = deepFreeze(module.settings(only(env, module.variables)));
      const { variable, matcher } = module.allowlist;
      const allow = deepFreeze(readAllowlist(env, variable, module.name, matcher, settings.live));
      const { fields, description, limits, refine, answerCheck } = module.branch(settings);
      const closed = closedBranch(module.name, fields, escalations);
      // NOTIFY_PUBLIC_URL read here, where the whole environment is handed in: `ask` is refused at the call without it.
      const rules = rulesOf(refine, publicBaseUrl(env, 'NOTIFY_PUBLIC_URL'), module.answerRoom, answerCheck, escalations);
      // Refined before .meta(): the description and limits belong to the schema the union holds.
      const branch = (
        rules
          ? closed.superRefine((call, ctx) =>
              rules(call as z.output<z.ZodObject<Shape>> & { ask?: Ask; escalate?: string }, ctx as z.RefinementCtx),
            )
          : closed
      ).meta({ description, limits: { ...limits, ask: ASK_LIMITS } });
      return Object.freeze({
        channel,
        name: module.name,
        live: settings.live,
        allow,
        settings,
        branch,
        ...(module.receipts
          ? { receipts: { path: module.receipts.path, read: (cb: InboundCallback) => module.receipts!.read(settings, cb) } }
          : {}),
        ...inboundOf(module.inbound, settings),
        check: (ctx: CheckContext) => checkChannel(channel, settings, allow, ctx),
        async connect(ctx: ProviderContext, given?: Provider<unknown>, links?: AnswerLinker): Promise<ConnectedChannel> {
          const provider: Provider<P> = given ?? (isLive(settings) ? await channel.createProvider(settings, ctx) : dryRunProvider);
          // Through `channel`, not `module`, so a test can spy on one method of the module.
          const typed: TypedChannel<CallOf<V, Shape>, P> = {
            name: module.name,
            live: settings.live,
            allow,
            allowVariable: variable,
            matcher,
            provider,
            takesReceipts: module.receipts !== undefined,
            // The one cast: parsedWith() says this branch's own parse returned `value`.
            parse: (value) => (parsedWith(value, branch) ? (value as CallOf<V, Shape>) : branch.parse(value)),
            recipients: (call) => channel.recipients(call),
            recipientClass: (recipient) => channel.recipientClass?.(recipient) ?? module.name,
            buildPayload: (call, id, timeoutMs, at) => channel.buildPayload(call, withAnswer(call, { id, settings, timeoutMs, at }, links)),
            summary: (call) => module.summary?.(call) ?? firstLineOf(call),
            approvalRule: (rule, call) => module.approvalRules?.[rule]?.(call, settings) ?? false,
            capAmount: (measure, call, meta) => (measure === module.name ? 1 : module.capMeasures?.[measure]?.(call, meta)),
            // The record holds the payload this channel built: its own type.
            editCall: (posted, change) => module.editCall?.(posted as P, change),
            editWaiting: (call, change) => module.editWaiting?.(call, change),
            forward: (to, message) => module.forward?.(to, message),
            branchOf: (value) =>
              branch.safeParse(value) as { success: true; data: CallOf<V, Shape> } | { success: false; error: z.ZodError },
          };
          return {
            name: module.name,
            live: settings.live,
            providerName: provider.name,
            open: (use) => use(typed),
            close: async () => {
              if (given === undefined) await provider.close?.();
            },
          };
        },
      });
    },
  };
  return channel;
}

/** The call type of a defined channel: `CallOfChannel<typeof email>`. */
export type CallOfChannel<C> = C extends ChannelModule<infer V, infer _K, infer _S, infer Shape, infer _P> ? CallOf<V, Shape> : never;
