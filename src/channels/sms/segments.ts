/**
 * SMS segment counting, as carriers split. GSM-7 packs 160 septets in one segment, 153 per
 * segment once a message is concatenated (the rest is the concatenation header); its
 * extension characters take two septets (an escape and the character). One character
 * outside GSM-7 switches the whole message to UCS-2: 70 UTF-16 units in one segment, 67 per
 * segment when concatenated. A segment never splits an escape pair or a surrogate pair: a
 * two-unit character that would straddle a boundary moves whole to the next segment, which
 * can leave a segment one unit short.
 */
const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXTENSION = '\f^{}\\[~]|€';
const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

export const SMS_ENCODINGS = ['GSM-7', 'UCS-2'] as const;
export type SmsEncoding = (typeof SMS_ENCODINGS)[number];

export interface CharAt {
  char: string;
  /** Position in characters (code points), as a person counts. */
  index: number;
}

export interface SegmentCount {
  encoding: SmsEncoding;
  /** Septets for GSM-7, UTF-16 code units for UCS-2. */
  units: number;
  segments: number;
  /** Units allowed per segment at this segment count. */
  perSegment: number;
  /** The first character that needs UCS-2, when the encoding is UCS-2. */
  firstUcs2?: CharAt;
  /** The first two-unit character moved whole to the next segment, when one was. */
  firstMoved?: CharAt;
}

const SINGLE = { 'GSM-7': 160, 'UCS-2': 70 } as const;
const CONCATENATED = { 'GSM-7': 153, 'UCS-2': 67 } as const;

/** Units of each character (code point) in this encoding: 1 or 2. */
function unitsOf(encoding: SmsEncoding, char: string): number {
  return encoding === 'GSM-7' ? (EXTENSION.has(char) ? 2 : 1) : char.length;
}

function encodingOf(text: string): { encoding: SmsEncoding; firstUcs2?: CharAt } {
  let index = 0;
  for (const char of text) {
    if (!BASIC.has(char) && !EXTENSION.has(char)) return { encoding: 'UCS-2', firstUcs2: { char, index } };
    index += 1;
  }
  return { encoding: 'GSM-7' };
}

/** ASCII characters of the GSM-7 basic set, one septet each: most messages hold nothing else. */
const PLAIN_GSM7 = /^[\n\r !"#$%&'()*+,\-./0-9:;<=>?@A-Z_a-z]*$/;

export function countSegments(text: string): SegmentCount {
  // Counted without walking the text: no escape pair or surrogate pair to place.
  if (PLAIN_GSM7.test(text)) {
    const units = text.length;
    return units <= SINGLE['GSM-7']
      ? { encoding: 'GSM-7', units, segments: 1, perSegment: SINGLE['GSM-7'] }
      : { encoding: 'GSM-7', units, segments: Math.ceil(units / CONCATENATED['GSM-7']), perSegment: CONCATENATED['GSM-7'] };
  }
  const { encoding, firstUcs2 } = encodingOf(text);
  let units = 0;
  for (const char of text) units += unitsOf(encoding, char);
  const base = firstUcs2 ? { encoding, units, firstUcs2 } : { encoding, units };
  if (units <= SINGLE[encoding]) return { ...base, segments: 1, perSegment: SINGLE[encoding] };

  // Fill segments in order; a character that does not fit whole starts the next one.
  const size = CONCATENATED[encoding];
  let segments = 1;
  let used = 0;
  let index = 0;
  let firstMoved: CharAt | undefined;
  for (const char of text) {
    const width = unitsOf(encoding, char);
    if (used + width > size) {
      if (used < size) firstMoved ??= { char, index };
      segments += 1;
      used = 0;
    }
    used += width;
    index += 1;
  }
  return { ...base, segments, perSegment: size, ...(firstMoved ? { firstMoved } : {}) };
}

/** The most units a message may have in `maxSegments` segments of this encoding. */
export function capacity(encoding: SmsEncoding, maxSegments: number): number {
  return maxSegments === 1 ? SINGLE[encoding] : CONCATENATED[encoding] * maxSegments;
}

function codePoint(char: string): string {
  return 'U+' + char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

function describeChar({ char, index }: CharAt): string {
  return `"${char}" (${codePoint(char)}) at position ${index}`;
}

/** Why `text` does not fit, in words a model can act on; undefined when it fits. */
export function segmentProblem(text: string, maxSegments: number): string | undefined {
  const count = countSegments(text);
  if (count.segments <= maxSegments) return undefined;
  const limit = capacity(count.encoding, maxSegments);
  const segs = `${maxSegments} segment${maxSegments === 1 ? '' : 's'}`;
  // Within the capacity and still too many segments: a two-unit character was moved.
  const moved =
    count.units <= limit && count.firstMoved
      ? `, which take ${count.segments} segments: a segment never splits ${count.encoding === 'GSM-7' ? 'an extension character' : 'a character of two UTF-16 units'}, so ${describeChar(count.firstMoved)} moves whole to the next one`
      : '';
  if (count.encoding === 'UCS-2') {
    return (
      `Shorten body, or replace ${describeChar(count.firstUcs2!)} (and any other character outside GSM-7) to get ${capacity('GSM-7', maxSegments)}: ` +
      `that character needs UCS-2, which allows ${limit} characters in ${segs}, and body has ${count.units}${moved}.`
    );
  }
  return `Shorten body: ${segs} allow${maxSegments === 1 ? 's' : ''} ${limit} GSM-7 characters, and it has ${count.units} (extension characters such as € { } [ ] count as two)${moved}.`;
}
