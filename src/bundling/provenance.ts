/**
 * The provenance tag at the head of a prefixed tool's description, so the model sees which
 * server a tool belongs to (`[GitHub] Create an issue…`). Brackets and line breaks in the
 * label are dropped so the tag stays one recognisable token.
 */
export function provenanceTag(label: string): string {
  const clean = label.replace(/[[\]\r\n]/g, '').trim();
  return `[${clean || 'unknown'}]`;
}

/** Prepend the tag unless the description already starts with it (idempotent). */
export function tagDescription(description: string | undefined, label: string): string {
  const tag = provenanceTag(label);
  const text = description ?? '';
  if (text === tag || text.startsWith(`${tag} `)) return text;
  return text.length > 0 ? `${tag} ${text}` : tag;
}
