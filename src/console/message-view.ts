/**
 * What a held send will deliver, read from its recorded payload (the bytes that leave, not
 * the call that asked for them): who gets it as to, cc and bcc, its text, every MIME part, and
 * the text and links of Slack blocks. Bounded work per row: a part list decodes no attachment.
 */
import { blocksText } from '../channels/slack/blocks.js';
import type { DeliveryRecord } from '../store/types.js';
import { decodeWords, parseMime, partsOf, rawMessage, textBody, type MimeLeaf } from './mime.js';

export interface MessageView {
  /** Who it goes to, by how: To, Cc, Bcc (in no header); or Recipients when the channel has one kind. */
  recipients: { label: string; names: string[] }[];
  /** The text a recipient reads first, cut to `max` characters: `more` says how many were left out. */
  body?: { label: string; text: string; more: number };
  /** Every part of a mail, in order. */
  parts?: MimeLeaf[];
  /** Block Kit's text and links, one line a piece. */
  blocks?: string[];
  /** The URLs an MMS's media are fetched from. */
  media?: string[];
}

/** `a@x, B <b@y>` as its addresses' display forms, split at the commas between mailboxes. */
function mailboxes(header: string | undefined): string[] {
  if (!header) return [];
  return (decodeWords(header).match(/(?:"(?:[^"\\]|\\.)*"|<[^>]*>|[^,"<])+/g) ?? []).map((s) => s.trim()).filter((s) => s !== '');
}

const cut = (text: string, max: number) => ({ text: text.length > max ? text.slice(0, max) : text, more: Math.max(0, text.length - max) });

export function messageView(r: DeliveryRecord, maxBody: number): MessageView {
  const payload = r.payload as Record<string, unknown> | null;
  const raw = rawMessage(payload);
  if (raw !== undefined) {
    const message = parseMime(raw);
    const bcc = Array.isArray(payload?.bcc) ? payload.bcc.map(String) : [];
    const recipients = [
      { label: 'To', names: mailboxes(message.headers.get('to')) },
      { label: 'Cc', names: mailboxes(message.headers.get('cc')) },
      { label: 'Bcc (in no header)', names: bcc },
    ].filter((x) => x.label === 'To' || x.names.length > 0);
    const text = textBody(message);
    return { recipients, ...(text !== undefined ? { body: { label: 'Text', ...cut(text, maxBody) } } : {}), parts: partsOf(message) };
  }
  const names = r.approval?.recipients ?? [];
  const view: MessageView = { recipients: [{ label: 'Recipients', names }] };
  for (const k of ['text', 'body', 'Body']) {
    if (typeof payload?.[k] === 'string') {
      view.body = { label: 'Text', ...cut(payload[k] as string, maxBody) };
      break;
    }
  }
  // An MMS: Twilio fetches each and sends what it finds.
  if (Array.isArray(payload?.MediaUrl)) view.media = payload.MediaUrl.map(String);
  if (Array.isArray(payload?.blocks)) {
    view.blocks = blocksText(payload.blocks);
  }
  return view;
}
