/**
 * Slack allowlist entries and recipients: a channel ID (`C0123ABCD`, `G…`, `D…`) compares
 * exactly, since Slack IDs are upper case and a folded one is another ID; a `#name`
 * compares case-insensitively (ASCII only, so no Unicode folding can make two names
 * equal). An ID never matches a name: the server does not look names up, and a name can be
 * renamed onto another channel.
 */
import type { RecipientMatcher } from '../../policy/matcher.js';

/** Conversations (C public, G private, D direct) and users (U, W: the server opens the DM); both compare exactly. */
const CHANNEL_ID = /^[CGDUW][A-Z0-9]{2,}$/;
const CHANNEL_NAME = /^#[a-z0-9][a-z0-9._-]{0,79}$/i;

type SlackKey = { kind: 'id'; value: string } | { kind: 'name'; value: string };

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

function slackKey(value: string): SlackKey | undefined {
  if (CHANNEL_ID.test(value)) return { kind: 'id', value };
  if (CHANNEL_NAME.test(value)) return { kind: 'name', value: asciiLower(value) };
  return undefined;
}

export const slackMatcher: RecipientMatcher = {
  entryProblem(entry) {
    if (slackKey(entry)) return undefined;
    if (CHANNEL_ID.test(entry.toUpperCase())) {
      return `is neither a channel ID nor a #name: channel IDs are upper case (${entry.toUpperCase()}), and a name starts with # (#${entry.toLowerCase()})`;
    }
    if (CHANNEL_NAME.test(`#${entry}`)) return `is neither a channel ID nor a #name: write #${entry} for the channel named ${entry}`;
    return 'is neither a channel ID (C…, G…, D…) or user ID (U…, W…), upper case, nor a #name';
  },

  allows(recipient, entries) {
    const channel = slackKey(recipient);
    if (!channel) return false;
    return entries.some((raw) => {
      const entry = slackKey(raw);
      return entry !== undefined && entry.kind === channel.kind && entry.value === channel.value;
    });
  },
};
