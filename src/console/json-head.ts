/**
 * The top-level string members of a JSON object whose text was cut anywhere (a listing reads
 * a large payload's first characters only, Store.findListings): each as far as the text goes.
 */

/** A JSON string at `at` (its opening quote): its value, as far as the text goes, and where it ends. */
function stringAt(text: string, at: number): { value: string; end: number } {
  const m = /"((?:[^"\\]|\\.)*)/y;
  m.lastIndex = at;
  const body = m.exec(text)![1]!;
  const end = at + 1 + body.length;
  // Cut inside an escape: the escape goes (`\`, `\u12`).
  const whole = body.replace(/\\(u[0-9a-fA-F]{0,3})?$/, '');
  try {
    return { value: JSON.parse(`"${whole}"`) as string, end: text[end] === '"' ? end + 1 : end };
  } catch {
    return { value: whole, end };
  }
}

/** Past the value at `at` (an object, an array, a number or a literal), strings inside it skipped. */
function skipValue(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = stringAt(text, i).end - 1;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (c === ',' && depth === 0) return i;
  }
  return text.length;
}

export function headStrings(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = text.indexOf('{') + 1;
  if (i === 0) return out;
  while (i < text.length) {
    const key = /\s*,?\s*"/y;
    key.lastIndex = i;
    if (!key.exec(text)) break;
    const k = stringAt(text, key.lastIndex - 1);
    const colon = /\s*:\s*/y;
    colon.lastIndex = k.end;
    if (!colon.exec(text)) break;
    i = colon.lastIndex;
    if (text[i] === '"') {
      const v = stringAt(text, i);
      out[k.value] = v.value;
      i = v.end;
    } else i = skipValue(text, i);
  }
  return out;
}
