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
