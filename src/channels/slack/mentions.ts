/**
 * Broadcast mentions in Slack text (what pages many people at once), rewritten as inert text
 * that reads the same unless the operator allows them (NOTIFY_SLACK_ALLOW_BROADCAST=1), so an
 * agent cannot page a whole channel. User mentions (`<@U…>`) page one person and stay.
 */
const WORD_JOINER = '\u2060';
/** A special command, or a lone `<` before `!` (the second alternative). Linear: `[^<>]` stops at the next bracket. */
const SPECIAL = /<\s*!([^<>]*)>|<(?=\s*!)/g;
const PLAIN = /(?<![\w.%+-])@(?=(?:here|channel|everyone|group)(?![\w-]))/gi;
const PAGING = new Set(['here', 'channel', 'everyone', 'group']);
/**
 * The one command kept: a whole date, `date^<seconds>^<format with a {token}>` with an
 * optional link (a URL) and fallback label, as Slack defines it. Judged on the whole command, not its start, so that
 * `date^` anywhere else (in a label, after another command) keeps nothing.
 */
const DATE = /^date\^\d+\^[^|^]*\{[a-z_]+\}[^|^]*(?:\^[a-z][a-z\d+.-]*:\/\/[^|^\s]*)?(?:\|[^]*)?$/i;

export interface Neutralised {
  text: string;
  /** How many broadcast mentions were rewritten. */
  count: number;
}

/** "@here" for `<!here>`; the label, else the command, for the rest (`<!subteam^S1|@oncall>` → "@oncall"). */
function inertName(inner: string): string {
  const bar = inner.indexOf('|');
  const command = (bar < 0 ? inner : inner.slice(0, bar)).trim();
  const label =
    bar < 0
      ? ''
      : inner
          .slice(bar + 1)
          .trim()
          .replace(/^@+/, '');
  const keyword = command.split('^')[0]!.trim().toLowerCase();
  return PAGING.has(keyword) ? keyword : label || keyword;
}

/**
 * - Every special command `<!…>` (`<!here>`, `<!channel>`, `<!everyone>`, `<!group>`,
 *   `<!subteam^S…>` user groups, with a `|label`, any case or spacing, and any future one)
 *   becomes `@` + WORD JOINER + its name (or its label): it displays as "@here" and is no
 *   mention. Deny by default: only a whole `<!date^seconds^format…>` (a formatted date, which
 *   pages no one) stays.
 * - A `<` that opens `<!` without closing it is escaped as Slack asks (`&lt;`), so that no
 *   rewrite can bring a `<!…>` together out of the pieces around it.
 * - Plain `@here`, `@channel`, `@everyone`, `@group` get the same word joiner. Slack pages for
 *   them only with `link_names`, which this server never sets; the rewrite keeps them inert
 *   should that change. Plain `@handle` of a user group is linked only by `link_names` too.
 */
export function neutraliseBroadcasts(text: string): Neutralised {
  let count = 0;
  const out = text
    .replace(SPECIAL, (match: string, inner: string | undefined) => {
      if (inner === undefined) return '&lt;';
      if (DATE.test(inner)) return match;
      count += 1;
      return `@${WORD_JOINER}${inertName(inner)}`;
    })
    .replace(PLAIN, () => {
      count += 1;
      return `@${WORD_JOINER}`;
    });
  return { text: out, count };
}
