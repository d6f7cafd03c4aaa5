/**
 * Each format's request, built from a call: the body and headers its service reads, and its
 * own limits, checked at the call so that an over-long message is refused with the target
 * and the limit named, before anything leaves.
 */
import type { AnswerLink } from '../ask.js';
import type { WebhookFormat } from './targets.js';

export interface WebhookMessage {
  text: string;
  title?: string | undefined;
  fields?: readonly { name: string; value: string }[] | undefined;
  urgent?: boolean | undefined;
  /** A question's link (the call asks): `answer_urls` in the standard body, a line of text or an action elsewhere. */
  answer?: AnswerLink | undefined;
}

export interface FormatRequest {
  headers: Record<string, string>;
  body: string;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const hasExtras = (m: WebhookMessage): boolean => m.title !== undefined || (m.fields?.length ?? 0) > 0;

/** Standard Webhooks: `{ type, id, title, text, fields }`; the signature headers are the provider's (./sign.ts). */
function standard(m: WebhookMessage, id: string): FormatRequest {
  const answer = m.answer ? { choices: m.answer.choices, answer_urls: [m.answer.url] } : {};
  const body = JSON.stringify({ type: 'notification', id, title: m.title ?? null, text: m.text, fields: m.fields ?? [], ...answer });
  return { headers: { ...JSON_TYPE }, body };
}

/** A Teams Workflows webhook ("Post to a channel when a webhook request is received"): a message with one Adaptive Card. */
function teams(m: WebhookMessage): FormatRequest {
  const body: unknown[] = [];
  if (m.title !== undefined) body.push({ type: 'TextBlock', text: m.title, weight: 'Bolder', size: 'Medium', wrap: true });
  body.push({ type: 'TextBlock', text: m.text, wrap: true });
  if (m.fields?.length) body.push({ type: 'FactSet', facts: m.fields.map((f) => ({ title: f.name, value: f.value })) });
  const card = { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body };
  const message = {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }],
  };
  return { headers: { ...JSON_TYPE }, body: JSON.stringify(message) };
}

/** Discord: the text as `content`, or with a title or fields, one embed; mentions never ping (`allowed_mentions`). */
function discord(m: WebhookMessage): FormatRequest {
  const quiet = { allowed_mentions: { parse: [] } };
  if (!hasExtras(m)) return { headers: { ...JSON_TYPE }, body: JSON.stringify({ content: m.text, ...quiet }) };
  const embed = {
    ...(m.title !== undefined ? { title: m.title } : {}),
    description: m.text,
    ...(m.fields?.length ? { fields: m.fields.map((f) => ({ name: f.name, value: f.value })) } : {}),
  };
  return { headers: { ...JSON_TYPE }, body: JSON.stringify({ embeds: [embed], ...quiet }) };
}

/** Google Chat: `text`, or with a title or fields, one card (cardsV2) holding the text and a line per field. */
function googleChat(m: WebhookMessage, id: string): FormatRequest {
  if (!hasExtras(m)) return { headers: { 'content-type': 'application/json; charset=UTF-8' }, body: JSON.stringify({ text: m.text }) };
  const widgets = [
    { textParagraph: { text: m.text } },
    ...(m.fields ?? []).map((f) => ({ decoratedText: { topLabel: f.name, text: f.value } })),
  ];
  const card = { ...(m.title !== undefined ? { header: { title: m.title } } : {}), sections: [{ widgets }] };
  return { headers: { 'content-type': 'application/json; charset=UTF-8' }, body: JSON.stringify({ cardsV2: [{ cardId: id, card }] }) };
}

/** A header value as ntfy reads it: as is in ASCII, else RFC 2047 (`=?UTF-8?B?…?=`), which ntfy decodes. */
const headerText = (s: string): string =>
  /^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s.replace(/[\r\n]+/g, ' '), 'utf8').toString('base64')}?=`;

/** ntfy: the text (and a `name: value` line per field) as the body; title, priority and tags as headers. */
function ntfy(m: WebhookMessage): FormatRequest {
  // A `view` action opens the answer page (one button in the notification); the text carries the link too.
  const lines = [m.text, ...(m.fields ?? []).map((f) => `${f.name}: ${f.value}`)];
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8', Tags: 'notify-mcp' };
  if (m.title !== undefined) headers.Title = headerText(m.title);
  headers.Priority = m.urgent ? 'high' : 'default';
  if (m.answer) headers.Actions = `view, Answer, ${m.answer.url}`;
  return { headers, body: lines.join('\n') };
}

/** The line a text-only format's message ends with when it asks: the one rendering of the link outside the standard body. */
export const answerLine = (link: AnswerLink): string => `\n\nAnswer (${link.choices.join(' / ')}): ${link.url}`;

/**
 * The message as `format` shows it: the standard body carries a question's link as data, every
 * other format in its text too (so the format's text limit counts it; ntfy adds an action).
 */
export function shownMessage(format: WebhookFormat, m: WebhookMessage): WebhookMessage {
  return m.answer && format !== 'standard' ? { ...m, text: m.text + answerLine(m.answer) } : m;
}

/** The request for message `m` as `format` shows it (shownMessage first). */
export function formatRequest(format: WebhookFormat, m: WebhookMessage, id: string): FormatRequest {
  switch (format) {
    case 'standard':
      return standard(m, id);
    case 'teams':
      return teams(m);
    case 'discord':
      return discord(m);
    case 'google-chat':
      return googleChat(m, id);
    case 'ntfy':
      return ntfy(m);
  }
}

/** The services' own limits, as their documentation states them. */
export const LIMITS = {
  /** Teams: a message (its card included) of at most 28 KB. */
  teamsBytes: 28 * 1024,
  discordContent: 2000,
  discordEmbed: { title: 256, description: 4096, fields: 25, name: 256, value: 1024, total: 6000 },
  googleChatText: 4096,
  googleChatBytes: 32_000,
  /** ntfy.sh's message limit (a longer body becomes an attachment). */
  ntfyBytes: 4096,
} as const;

/** In words, per format, for the description: the limit a call is checked against. */
export const LIMIT_WORDS: Readonly<Record<WebhookFormat, string>> = {
  standard: 'JSON, signed',
  teams: `card ≤${LIMITS.teamsBytes / 1024} KB`,
  discord: `text ≤${LIMITS.discordContent}, ≤${LIMITS.discordEmbed.description} with title/fields`,
  'google-chat': `text ≤${LIMITS.googleChatText}`,
  ntfy: `≤${LIMITS.ntfyBytes} bytes`,
};

function discordProblem(m: WebhookMessage): string | undefined {
  const e = LIMITS.discordEmbed;
  if (!hasExtras(m)) return m.text.length > LIMITS.discordContent ? `text takes at most ${LIMITS.discordContent} characters` : undefined;
  if (m.text.length > e.description) return `text takes at most ${e.description} characters with a title or fields (an embed)`;
  if ((m.title?.length ?? 0) > e.title) return `title takes at most ${e.title} characters`;
  for (const f of m.fields ?? []) {
    if (f.name.length === 0 || f.value.length === 0) return 'a field needs a name and a value that are not empty';
    if (f.name.length > e.name || f.value.length > e.value) return `a field takes a name ≤${e.name} and a value ≤${e.value} characters`;
  }
  const total = (m.title?.length ?? 0) + m.text.length + (m.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0);
  return total > e.total ? `an embed takes at most ${e.total} characters in all (title, text and fields: ${total})` : undefined;
}

/** Why `m` does not fit `format`'s service, in words after "target X: ", or undefined. */
export function formatProblem(format: WebhookFormat, m: WebhookMessage, body: string): string | undefined {
  switch (format) {
    case 'standard':
      return undefined;
    case 'teams':
      return bytes(body) > LIMITS.teamsBytes
        ? `a Teams message takes at most ${LIMITS.teamsBytes} bytes (this one: ${bytes(body)})`
        : undefined;
    case 'discord':
      return discordProblem(m);
    case 'google-chat':
      if (m.text.length > LIMITS.googleChatText) return `text takes at most ${LIMITS.googleChatText} characters`;
      return bytes(body) > LIMITS.googleChatBytes ? `a Chat message takes at most ${LIMITS.googleChatBytes} bytes` : undefined;
    case 'ntfy':
      return bytes(body) > LIMITS.ntfyBytes
        ? `an ntfy message takes at most ${LIMITS.ntfyBytes} bytes (this one: ${bytes(body)})`
        : undefined;
  }
}
