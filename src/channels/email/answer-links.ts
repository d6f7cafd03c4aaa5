/**
 * How an email question shows its answer link: the one place it is rendered, in both parts.
 * One link set per mail: every recipient of a mail reads the same message (a mail to
 * several people carries one link, and the first of them to answer answers for all).
 */
import type { AnswerLink } from '../ask.js';

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const offered = (link: AnswerLink): string => link.choices.join(' / ');

/** The HTML part's closing paragraph: the link is its own text too, so a text derived from the HTML keeps it. */
export function htmlAnswer(link: AnswerLink): string {
  const url = escapeHtml(link.url);
  return `<p>Answer (${escapeHtml(offered(link))}): <a href="${url}">${url}</a></p>`;
}

/** The text part's closing lines. */
export const textAnswer = (link: AnswerLink): string => `\n\nAnswer (${offered(link)}): ${link.url}\n`;

/** The mail's bodies with the link: `text` stays absent when it was (it is derived from the HTML, link included). */
export function withEmailAnswer(html: string, text: string | undefined, link: AnswerLink): { html: string; text?: string } {
  const withHtml = `${html}\n${htmlAnswer(link)}`;
  return text === undefined ? { html: withHtml } : { html: withHtml, text: text + textAnswer(link) };
}
