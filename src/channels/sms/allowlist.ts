/**
 * SMS allowlist entries are E.164 prefixes (`+1415`, or a whole number); spaces, dashes,
 * dots and parentheses in an entry are ignored and a missing `+` is added. A recipient is
 * compared as given, and must be E.164 itself: a number the matcher would have to
 * normalise is not the one Twilio receives.
 */
import type { RecipientMatcher } from '../../policy/matcher.js';

const E164 = /^\+[1-9]\d{1,14}$/;
const PREFIX = /^\+[1-9]\d{0,14}$/;

function entryPrefix(entry: string): string {
  const digits = entry.replace(/[\s().-]/g, '');
  return digits.startsWith('+') ? digits : `+${digits}`;
}

export const smsMatcher: RecipientMatcher = {
  entryProblem(entry) {
    if (PREFIX.test(entryPrefix(entry))) return undefined;
    return 'is not an E.164 prefix: write + and 1-15 digits, the first not 0 (e.g. +1415 or +442079460000)';
  },

  allows(recipient, entries) {
    if (!E164.test(recipient)) return false;
    return entries.some((raw) => {
      const prefix = entryPrefix(raw);
      return PREFIX.test(prefix) && recipient.startsWith(prefix);
    });
  },
};
