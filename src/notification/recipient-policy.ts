/**
 * The recipient policy every send meets at the moment it is made and again when it leaves,
 * whatever path it took (a direct send, a scheduled or held release, an approved release, an
 * edit): one function, so that no path asks it differently.
 */
import type { TypedChannel } from '../channels/channel.js';
import { errors } from '../core/errors.js';
import { isAllowed } from '../policy/allowlist.js';

/**
 * Throws RECIPIENT_NOT_ALLOWED naming every recipient the channel's allowlist refuses, with
 * the path of the first one in `call` (the arguments as sent) when a field names it.
 */
export function checkAllowed<C, P>(
  channel: TypedChannel<C, P>,
  recipients: readonly string[],
  call?: C,
  nothing = 'nothing was sent',
): void {
  const refused = [...new Set(recipients.filter((r) => !isAllowed(channel.matcher, r, channel.allow)))];
  if (refused.length === 0) return;
  const who = refused.length === 1 ? `${refused[0]} is` : `${refused.join(', ')} are`;
  const path = call === undefined ? undefined : pathOf(call as Readonly<Record<string, unknown>>, refused[0]!);
  throw errors.recipientNotAllowed(
    `${who} not on this server's ${channel.name} allowlist (${channel.allowVariable}); ${nothing}. Use an allowed recipient, or ask the operator to add it.`,
    { via: channel.name, ...(path ? { path } : {}) },
  );
}

/** The field (or list item) of `call` that names `recipient`, as a JSON Pointer: a display name may surround it. */
function pathOf(call: Readonly<Record<string, unknown>>, recipient: string): string | undefined {
  const names = (v: unknown) => typeof v === 'string' && v.toLowerCase().includes(recipient.toLowerCase());
  for (const [field, value] of Object.entries(call)) {
    if (field === 'via') continue;
    if (names(value)) return `/${field}`;
    if (Array.isArray(value)) {
      const i = value.findIndex(names);
      if (i !== -1) return `/${field}/${i}`;
    }
  }
  return undefined;
}
