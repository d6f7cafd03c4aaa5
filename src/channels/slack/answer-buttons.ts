/**
 * A Slack question's buttons (DESIGN section 11, with SLACK_SIGNING_SECRET): one per choice in
 * an `actions` block, each carrying the message's answer token and the choice's position.
 * The value is only a pointer: a click is verified (./signature.ts), then mapped to the stored
 * question by the token's hash, and the choice is read from the question, never from the click.
 * Built from the call and the derived token alone, so a rebuilt payload is the same, byte for byte.
 */
import type { AnswerLink } from '../ask.js';
import type { ReplyOutcome } from '../inbound.js';
import { slackAnswerLine } from './answer-links.js';
import type { SlackPayload } from './web-api.js';

/** The block_id of the buttons, and the prefix of each button's action_id. */
export const ANSWER_BLOCK = 'notify_answer';
/** A button's value: `<position>:<token>`. */
export const BUTTON_VALUE = /^([0-4]):([A-Za-z0-9_-]{43})$/;
/** Slack's limit on a section's text. */
const SECTION_MAX = 3000;

const escaped = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The text as sections of at most 3000 characters, cut at a line break where one is near. */
export function textSections(text: string): { type: 'section'; text: { type: 'mrkdwn'; text: string } }[] {
  const sections = [];
  let rest = text;
  while (rest.length > 0) {
    let cut = rest.length <= SECTION_MAX ? rest.length : rest.lastIndexOf('\n', SECTION_MAX);
    if (cut < SECTION_MAX / 2) cut = Math.min(rest.length, SECTION_MAX);
    sections.push({ type: 'section' as const, text: { type: 'mrkdwn' as const, text: rest.slice(0, cut) } });
    rest = rest.slice(cut).replace(/^\n/, '');
  }
  return sections;
}

export function answerButtons(link: AnswerLink): { type: 'actions'; block_id: string; elements: unknown[] } {
  const token = link.url.slice(link.url.lastIndexOf('/') + 1);
  return {
    type: 'actions',
    block_id: ANSWER_BLOCK,
    elements: link.choices.map((choice, i) => ({
      type: 'button',
      action_id: `${ANSWER_BLOCK}_${i}`,
      text: { type: 'plain_text', text: choice },
      value: `${i}:${token}`,
    })),
  };
}

/**
 * The message with buttons: Slack shows blocks instead of the text, so a text-only call gets its
 * text as sections first. The text keeps the link line (the fallback notifications show, and
 * the room checked at the call).
 */
export function withSlackButtons(payload: SlackPayload, link: AnswerLink): SlackPayload {
  const blocks = payload.blocks ?? textSections(payload.text);
  return { ...payload, text: payload.text + slackAnswerLine(link), blocks: [...blocks, answerButtons(link)] };
}

/** Who answered, as a Slack message may say it: a Slack user is mentioned; another channel's sender (a phone number) is never shown. */
function answerer(by: string, via: string): string {
  if (via === 'slack') return `<@${escaped(by)}>`;
  return via === 'link' ? 'the answer link' : `a reply by ${escaped(via)}`;
}

/** What replaces the buttons once the question is answered. */
export function answeredBlock(outcome: Extract<ReplyOutcome, { choice: string }>): { type: 'context'; elements: unknown[] } {
  return {
    type: 'context',
    elements: [{ type: 'mrkdwn', text: `Answered *${escaped(outcome.choice)}* by ${answerer(outcome.by, outcome.via)}` }],
  };
}

/** The message's blocks with the buttons replaced by who answered; other blocks as Slack sent them. */
export function blocksAnswered(blocks: readonly unknown[], outcome: Extract<ReplyOutcome, { choice: string }>): unknown[] {
  return blocks.map((b) => ((b as { block_id?: unknown }).block_id === ANSWER_BLOCK ? answeredBlock(outcome) : b));
}
