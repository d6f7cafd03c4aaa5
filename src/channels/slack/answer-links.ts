/**
 * How a Slack question shows its answer link: the one place it is rendered (buttons, with
 * SLACK_SIGNING_SECRET, are to come beside it). In the text, after a blank line; with blocks
 * (which Slack shows instead of the text), as one more section too (the call keeps room for it).
 */
import type { AnswerLink } from '../ask.js';
import type { SlackPayload } from './web-api.js';

const escaped = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The line the text ends with; its length is the room the link takes (checked at the call). */
export const slackAnswerLine = (link: AnswerLink): string => `\n\nAnswer (${link.choices.map(escaped).join(' / ')}): <${link.url}>`;

export function withSlackAnswer(payload: SlackPayload, link: AnswerLink): SlackPayload {
  const line = slackAnswerLine(link);
  const out: SlackPayload = { ...payload, text: payload.text + line };
  if (payload.blocks) out.blocks = [...payload.blocks, { type: 'section', text: { type: 'mrkdwn', text: line.trim() } }];
  return out;
}
