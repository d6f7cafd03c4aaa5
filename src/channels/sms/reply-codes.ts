/**
 * An SMS question's reply codes (DESIGN section 11): the text ends with `Reply 1 for Yes, 2
 * for No` (an acknowledgement: `Reply 1 to acknowledge`), and a reply of that digit answers.
 * No link: SMS questions are answered by reply. The codes count in the segments, so a body
 * that fits alone but not with them is refused at the call, saying how much they take.
 */
import { ACKNOWLEDGE } from '../ask.js';
import { capacity, countSegments, segmentProblem } from './segments.js';

/** What the body ends with: after a blank line, one code per choice in order, from 1. */
export function replyCodesLine(choices: readonly string[]): string {
  if (choices.length === 1 && choices[0] === ACKNOWLEDGE) return '\n\nReply 1 to acknowledge';
  return `\n\nReply ${choices.map((c, i) => `${i + 1} for ${c}`).join(', ')}`;
}

export const withReplyCodes = (body: string, choices: readonly string[]): string => body + replyCodesLine(choices);

/**
 * The code a reply reads as: one digit, alone but for spaces and a trailing full stop (`1`,
 * ` 2.`); null for any other text. A reply is short; anything longer is a message, not an answer.
 */
export function replyCode(text: string): number | null {
  const m = /^\s*([1-9])\s*\.?\s*$/.exec(text);
  return m ? Number(m[1]) : null;
}

/** Why the body does not fit with the codes of `choices` added, or undefined when it does (alone, segmentProblem judges it). */
export function replyCodesProblem(body: string, choices: readonly string[], maxSegments: number): string | undefined {
  if (segmentProblem(body, maxSegments)) return undefined;
  const line = replyCodesLine(choices);
  const whole = countSegments(body + line);
  if (whole.segments <= maxSegments) return undefined;
  // Counted in the whole message's encoding: a choice outside GSM-7 turns the body to UCS-2 too.
  const bodyUnits = whole.encoding === 'UCS-2' ? body.length : countSegments(body).units;
  const taken = whole.units - bodyUnits;
  const limit = capacity(whole.encoding, maxSegments);
  const segs = `${maxSegments} segment${maxSegments === 1 ? '' : 's'}`;
  return (
    `Shorten body: with ask, the reply codes at its end (${JSON.stringify(line.trim())}, after a blank line) take ${taken} of the ` +
    `${limit} ${whole.encoding} characters ${segs} allow${maxSegments === 1 ? 's' : ''}, so body may have ${limit - taken}, and it has ${bodyUnits}.`
  );
}
