/**
 * Webhooks: a post to a target the operator named in NOTIFY_WEBHOOKS, in its format
 * (./formats.ts): signed Standard Webhooks JSON, a Teams Adaptive Card, Discord, Google Chat
 * or ntfy. The model names a target, never a URL; without a target the channel is offered
 * nowhere. ./http.ts sends what is built here; ./address.ts keeps it off private addresses.
 */
import { z } from 'zod';
import { flag } from '../../core/env.js';
import type { RecipientMatcher } from '../../policy/matcher.js';
import { defineChannel } from '../channel.js';
import type { AnswerLink } from '../ask.js';
import { answerLine, formatProblem, formatRequest, shownMessage, type WebhookMessage } from './formats.js';
import type { WebhookRequest } from './http.js';
import { REDACTED } from './sign.js';
import { chainOf, privateHosts, readTargets, redactedUrl, type WebhookTarget } from './targets.js';

const TARGET_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** Allowlist entries are target names, compared exactly. */
const targetMatcher: RecipientMatcher = {
  entryProblem: (entry) => (TARGET_NAME.test(entry) ? undefined : 'is not a target name of NOTIFY_WEBHOOKS (a-z, 0-9, _ or -)'),
  allows: (recipient, entries) => entries.includes(recipient),
};

/** The request for one target and its fallbacks, as recorded: secrets redacted, the timestamp the message's. */
function requestFor(chain: readonly WebhookTarget[], m: WebhookMessage, id: string, at: number): WebhookRequest {
  const [target, ...rest] = chain;
  const { headers, body } = formatRequest(target!.format, shownMessage(target!.format, m), id);
  if (target!.format === 'standard') {
    Object.assign(headers, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at / 1000)), 'webhook-signature': `v1,${REDACTED}` });
  }
  if (target!.format === 'ntfy' && target!.secret) headers.Authorization = `Bearer ${REDACTED}`;
  const request: WebhookRequest = {
    target: target!.name,
    format: target!.format,
    method: 'POST',
    url: redactedUrl(target!.url),
    headers,
    body,
  };
  return rest.length ? { ...request, fallback: requestFor(rest, m, id, at) } : request;
}

/** A call's own fields, as the refinement and buildPayload read them. */
interface Call {
  target: string;
  text: string;
  title?: string | undefined;
  fields?: string[][] | undefined;
  urgent?: boolean | undefined;
}

/** The message the formats build from: each pair as `{ name, value }`. */
const messageOf = (call: Call): WebhookMessage => ({
  text: call.text,
  title: call.title,
  urgent: call.urgent,
  ...(call.fields ? { fields: call.fields.map(([name = '', value = '']) => ({ name, value })) } : {}),
});

/** An id as long as a notification's (`ntf_` and 32 hex digits): a card names it, so its size counts. */
const ID_SHAPE = `ntf_${'0'.repeat(32)}`;

const TITLE_MAX = 256;
const MAX_FIELDS = 20;

function pairsProblem(pairs: string[][], ctx: z.RefinementCtx): void {
  if (pairs.length > MAX_FIELDS)
    ctx.addIssue({ code: 'custom', message: `Shorten {field}: it takes at most ${MAX_FIELDS} pairs.`, params: { code: 'TOO_LONG' } });
  const at = pairs.findIndex((p) => p.length !== 2);
  if (at !== -1)
    ctx.addIssue({
      code: 'custom',
      path: [at],
      message: 'Fix {field}: each field is a [name, value] pair of two strings.',
      params: { code: 'INVALID_FIELD' },
    });
}
const FIELD_MAX = { name: 256, value: 1024 };

/** The bounds every format shares, on title and fields. */
function sizeProblem(m: WebhookMessage): { path: (string | number)[]; message: string } | undefined {
  if ((m.title?.length ?? 0) > TITLE_MAX) return { path: ['title'], message: `Shorten {field}: it takes at most ${TITLE_MAX} characters.` };
  const at = (m.fields ?? []).findIndex((f) => f.name.length > FIELD_MAX.name || f.value.length > FIELD_MAX.value);
  if (at === -1) return undefined;
  return {
    path: ['fields', at],
    message: `Shorten {field}: a name takes at most ${FIELD_MAX.name} characters, a value ${FIELD_MAX.value}.`,
  };
}

/** The first target of the call's chain (the target, then its fallbacks) whose format's limit `m` passes, in words. */
function chainProblem(call: Call, m: WebhookMessage, targets: readonly WebhookTarget[]): string | undefined {
  for (const t of chainOf(call.target, targets)) {
    const shown = shownMessage(t.format, m);
    const problem = formatProblem(t.format, shown, formatRequest(t.format, shown, ID_SHAPE).body);
    if (!problem) continue;
    return `target ${t.name}${t.name === call.target ? '' : ` (the fallback of ${call.target})`}: ${problem}`;
  }
  return undefined;
}

export const webhook = defineChannel({
  name: 'webhook',
  label: 'webhook',
  variables: ['NOTIFY_WEBHOOKS', 'NOTIFY_WEBHOOK_SECRET_*', 'NOTIFY_WEBHOOK_PRIVATE_HOSTS', 'NOTIFY_WEBHOOK_DRY_RUN'],

  settings(env) {
    const hosts = privateHosts(env.NOTIFY_WEBHOOK_PRIVATE_HOSTS);
    const targets = readTargets(env, hosts);
    const common = { offered: targets.length > 0, targets, privateHosts: hosts };
    // The URLs are the credentials: named targets are live unless the operator asks for a dry run.
    return targets.length > 0 && !flag(env, 'NOTIFY_WEBHOOK_DRY_RUN')
      ? { live: true as const, ...common }
      : { live: false as const, ...common };
  },

  allowlist: { variable: 'NOTIFY_WEBHOOK_ALLOW', matcher: targetMatcher },

  branch: ({ targets }) => {
    const names = targets.map((t) => t.name);
    const [first = 'none', ...others] = names;
    return {
      fields: {
        target: z.enum([first, ...others]),
        text: z.string().min(1).max(40_000),
        // Title and field lengths are the refinement's (TITLE_MAX, FIELD_MAX): each bound in the schema costs context.
        title: z.string().optional(),
        // [name, value] pairs, bounded by the refinement: an object per pair, or each bound in the schema, costs context.
        fields: z.array(z.array(z.string())).superRefine(pairsProblem).optional(),
      },
      description: `fields: ≤${MAX_FIELDS} [name, value] pairs.`,
      // Each format's own limit, for the target named and every fallback it may reach.
      refine(call: Call, ctx: z.RefinementCtx) {
        const m = messageOf(call);
        const long = sizeProblem(m);
        if (long) return ctx.addIssue({ code: 'custom', ...long, params: { code: 'TOO_LONG' } });
        const problem = chainProblem(call, m, targets);
        if (problem)
          ctx.addIssue({ code: 'custom', path: ['text'], message: `Shorten {field}: ${problem}.`, params: { code: 'TOO_LONG' } });
      },
      // With ask, the same limits with the link in the message (the text of every format but standard).
      answerCheck: (call: Call, link: AnswerLink) => {
        const problem = chainProblem(call, { ...messageOf(call), answer: link }, targets);
        return problem
          ? { path: ['text'], message: `Shorten {field}: with ask's answer link (${answerLine(link).length} characters), ${problem}.` }
          : undefined;
      },
    };
  },

  sentMeans: 'The target answered 2xx: it took the post; no later receipt comes.',

  recipients: (call) => [call.target],

  notice: (to, n) => ({ via: 'webhook', target: to, title: n.subject, text: `${n.text} Approve or decline: ${n.link}` }),
  forward: (to, m) => ({ via: 'webhook', target: to, title: m.subject.slice(0, TITLE_MAX), text: m.text.slice(0, 4_000) }),
  editWaiting: (call, change) => ({ ...call, text: change.text }),
  summary: (call) => ({
    headlineLabel: call.title === undefined ? 'First line' : 'Title',
    headline: call.title ?? call.text.split('\n')[0]!,
    body: call.text,
    details: (call.fields ?? []).map(([label, value]) => ({ label: label!, value: value! })),
  }),

  async buildPayload(call, { id, settings, at, answer }) {
    return { payload: requestFor(chainOf(call.target, settings.targets), { ...messageOf(call), answer }, id, at ?? Date.now()) };
  },

  async check(settings, _allow, ctx) {
    const { checkWebhooks } = await import('./check.js');
    return checkWebhooks(settings, ctx);
  },

  async createProvider(settings, { log, maxConcurrent, requestTimeoutMs }) {
    const { createWebhookProvider } = await import('./http.js');
    return createWebhookProvider({
      targets: settings.targets,
      privateHosts: settings.privateHosts,
      timeoutMs: requestTimeoutMs,
      maxConcurrent,
      log,
    });
  },

  examples: [
    { via: 'webhook', target: 'alerts', text: 'Deploy finished' },
    {
      via: 'webhook',
      target: 'alerts',
      text: 'db-1 is down',
      title: 'Incident',
      fields: [
        ['host', 'db-1'],
        ['since', '09:12 UTC'],
      ],
      idempotency_key: 'incident-7',
    },
  ],
});
