/**
 * SMS segment counting. GSM-7 packs 160 septets in one segment (153 per segment once a
 * message is split, the rest being the concatenation header); its extension characters
 * take two septets. One character outside GSM-7 switches the whole message to UCS-2:
 * 70 UTF-16 units in one segment, 67 per segment when split.
 */
const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXTENSION = '\f^{}\\[~]|€';
const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SegmentCount {
  encoding: SmsEncoding;
  /** Septets for GSM-7, UTF-16 code units for UCS-2. */
  units: number;
  segments: number;
  /** Units allowed per segment at this segment count. */
  perSegment: number;
  /** The first character that needs UCS-2, when the encoding is UCS-2. */
  firstUcs2?: { char: string; index: number };
}

export function countSegments(text: string): SegmentCount {
  let septets = 0;
  let index = 0;
  for (const char of text) {
    if (BASIC.has(char)) septets += 1;
    else if (EXTENSION.has(char)) septets += 2;
    else {
      const units = text.length;
      const segments = units <= 70 ? 1 : Math.ceil(units / 67);
      return { encoding: 'UCS-2', units, segments, perSegment: segments === 1 ? 70 : 67, firstUcs2: { char, index } };
    }
    index += 1;
  }
  const segments = septets <= 160 ? 1 : Math.ceil(septets / 153);
  return { encoding: 'GSM-7', units: septets, segments, perSegment: segments === 1 ? 160 : 153 };
}

/** The most units a message may have in `maxSegments` segments of this encoding. */
export function capacity(encoding: SmsEncoding, maxSegments: number): number {
  if (encoding === 'GSM-7') return maxSegments === 1 ? 160 : 153 * maxSegments;
  return maxSegments === 1 ? 70 : 67 * maxSegments;
}

function codePoint(char: string): string {
  return 'U+' + char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

/** Why `text` does not fit, in words a model can act on; undefined when it fits. */
export function segmentProblem(text: string, maxSegments: number): string | undefined {
  const count = countSegments(text);
  if (count.segments <= maxSegments) return undefined;
  const limit = capacity(count.encoding, maxSegments);
  const segs = `${maxSegments} segment${maxSegments === 1 ? '' : 's'}`;
  if (count.encoding === 'UCS-2') {
    const { char, index } = count.firstUcs2!;
    return (
      `body needs UCS-2 because of "${char}" (${codePoint(char)}) at position ${index}, which allows ${limit} characters in ${segs}; ` +
      `it has ${count.units}. Replace that character (and any other outside GSM-7) to get ${capacity('GSM-7', maxSegments)}, or shorten the body.`
    );
  }
  return `body is ${count.units} GSM-7 characters (extension characters such as € { } [ ] count as two); ${segs} allow${maxSegments === 1 ? 's' : ''} ${limit}. Shorten the body.`;
}
