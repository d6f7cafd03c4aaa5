/**
 * A description up to this long, on one line, takes the tag inline (`[GitHub] Create an
 * issue.`); a longer or multi-line one gets the tag on a line of its own, so the label is
 * not read as the start of a long first sentence.
 */
export const INLINE_TAG_MAX = 80;

/**
 * The provenance tag at the head of a prefixed tool's description, so the model sees which
 * server a tool belongs to (`[GitHub] Create an issue…`). Brackets and line breaks in the
 * label are dropped so the tag stays one recognisable token.
 */
export function provenanceTag(label: string): string {
  const clean = label.replace(/[[\]\r\n]/g, '').trim();
  return `[${clean || 'unknown'}]`;
}

/** True when the description already starts with the tag, inline or on its own line. */
function isTagged(text: string, tag: string): boolean {
  return text === tag || text.startsWith(`${tag} `) || text.startsWith(`${tag}\n`) || text.startsWith(`${tag}\r\n`);
}

/**
 * Put the tag at the head of the description: inline for a short one-line description, on
 * its own line otherwise. Idempotent: a description that already starts with the tag (in
 * either form) is returned as it is.
 */
export function tagDescription(description: string | undefined, label: string): string {
  const tag = provenanceTag(label);
  const text = description ?? '';
  if (isTagged(text, tag)) return text;
  if (text.length === 0) return tag;
  const inline = text.length <= INLINE_TAG_MAX && !/[\r\n]/.test(text);
  return inline ? `${tag} ${text}` : `${tag}\n${text}`;
}

const LINE_BREAK = '\\n\\r\\u0085\\u2028\\u2029';
const SPACE = `(?:[^\\S${LINE_BREAK}]|\\p{Cf})`;
const OPEN = '\\[［【〔〖⟦';
const CLOSE = '\\]］】〕〗⟧';
/** A run of bracketed tags at the start of a line, after any spaces or invisible characters. */
const TAG_RUN = new RegExp(`(^|[${LINE_BREAK}])(${SPACE}*(?:[${OPEN}][^${CLOSE}${LINE_BREAK}]*[${CLOSE}]${SPACE}*)+)`, 'gu');

/**
 * Tags an upstream wrote itself (`[GitHub] …` at the start of any line, square or
 * full-width brackets) turned into plain parentheses, so that in what the gateway serves
 * only the tag it puts in front reads as one.
 */
export function neutralizeTags(text: string): string {
  return text.replace(
    TAG_RUN,
    (_, lineBreak: string, run: string) =>
      lineBreak + run.replace(new RegExp(`[${OPEN}]`, 'gu'), '(').replace(new RegExp(`[${CLOSE}]`, 'gu'), ')'),
  );
}

/** The text after our own tag when it starts with it, else undefined. */
function afterOwnTag(text: string, tag: string): string | undefined {
  if (!isTagged(text, tag)) return undefined;
  const rest = text.slice(tag.length);
  return rest.startsWith('\r\n') ? rest.slice(2) : rest.slice(1);
}

/**
 * A served description or title: the upstream's own tags neutralised and, when `tagged`,
 * the server's tag in front (`tagDescription`). Text that already starts with the server's
 * own tag keeps it, once (a gateway behind a gateway). Undefined stays undefined unless a
 * tag is to be shown.
 */
export function provenanceText(text: string | undefined, label: string, tagged: boolean): string | undefined {
  const tag = provenanceTag(label);
  const own = text === undefined ? undefined : afterOwnTag(text, tag);
  const body = neutralizeTags(own ?? text ?? '');
  if (tagged || own !== undefined) return tagDescription(body, label);
  return text === undefined ? undefined : body;
}
