import { describe, expect, it } from 'vitest';
import { capacity, countSegments, segmentProblem } from './sms-segments.js';

describe('countSegments', () => {
  it('counts GSM-7 septets, extension characters as two', () => {
    expect(countSegments('a'.repeat(160))).toMatchObject({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(countSegments('a'.repeat(161))).toMatchObject({ encoding: 'GSM-7', segments: 2, perSegment: 153 });
    expect(countSegments('€'.repeat(80))).toMatchObject({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(countSegments('€'.repeat(80) + 'a')).toMatchObject({ units: 161, segments: 2 });
    expect(countSegments('a'.repeat(306))).toMatchObject({ segments: 2 });
    expect(countSegments('a'.repeat(307))).toMatchObject({ segments: 3 });
    expect(countSegments('Ünöcädé? ñ à é ù ì ò Ç Ø å Δ Ω ß ¿ ¡ £ ¥ § ¤')).toMatchObject({ encoding: 'GSM-7' });
  });

  it('switches the whole message to UCS-2 on one character outside GSM-7, naming it', () => {
    expect(countSegments('я'.repeat(70))).toMatchObject({ encoding: 'UCS-2', units: 70, segments: 1 });
    expect(countSegments('я'.repeat(71))).toMatchObject({ encoding: 'UCS-2', segments: 2, perSegment: 67 });
    expect(countSegments('ok 😀')).toMatchObject({ encoding: 'UCS-2', units: 5, firstUcs2: { char: '😀', index: 3 } });
    expect(countSegments('á')).toMatchObject({ encoding: 'UCS-2' }); // á is not in GSM-7 (à is)
  });

  it('states capacity per segment count', () => {
    expect([capacity('GSM-7', 1), capacity('GSM-7', 3), capacity('UCS-2', 1), capacity('UCS-2', 2)]).toEqual([160, 459, 70, 134]);
  });

  it('explains a body that does not fit, naming the character and the encoding', () => {
    expect(segmentProblem('a'.repeat(160), 1)).toBeUndefined();
    expect(segmentProblem('😀' + 'a'.repeat(69), 1)).toBe(
      'body needs UCS-2 because of "😀" (U+1F600) at position 0, which allows 70 characters in 1 segment; it has 71. ' +
        'Replace that character (and any other outside GSM-7) to get 160, or shorten the body.',
    );
    expect(segmentProblem('{'.repeat(81), 1)).toContain('body is 162 GSM-7 characters');
    expect(segmentProblem('a'.repeat(300), 2)).toBeUndefined();
  });
});
