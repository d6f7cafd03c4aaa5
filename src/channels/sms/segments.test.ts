import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertProperty } from '../../../test/helpers/property.js';
import { capacity, countSegments, segmentProblem } from './segments.js';

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

  it('counts ASCII text without walking it exactly as the walk does (the same text ending in é, which is walked)', async () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)), maxLength: 480 });
    await assertProperty(
      'plain GSM-7 count',
      fc.property(ascii, (text) => {
        expect(countSegments(`${text}a`)).toEqual(countSegments(`${text}é`));
      }),
      { numRuns: 500, examples: [['a'.repeat(159)], ['a'.repeat(305)], ['^'.repeat(100)], ['`'], ['$@_\n\r']] },
    );
  });

  it('states capacity per segment count', () => {
    expect([capacity('GSM-7', 1), capacity('GSM-7', 3), capacity('UCS-2', 1), capacity('UCS-2', 2)]).toEqual([160, 459, 70, 134]);
  });

  it('explains a body that does not fit, naming the character and the encoding', () => {
    expect(segmentProblem('a'.repeat(160), 1)).toBeUndefined();
    expect(segmentProblem('😀' + 'a'.repeat(69), 1)).toBe(
      'Shorten body, or replace "😀" (U+1F600) at position 0 (and any other character outside GSM-7) to get 160: ' +
        'that character needs UCS-2, which allows 70 characters in 1 segment, and body has 71.',
    );
    expect(segmentProblem('{'.repeat(81), 1)).toContain('1 segment allows 160 GSM-7 characters, and it has 162');
    expect(segmentProblem('a'.repeat(300), 2)).toBeUndefined();
  });

  describe('as carriers split: a segment never splits an escape pair or a surrogate pair', () => {
    it('moves an extension character that would straddle a GSM-7 boundary whole to the next segment', () => {
      // 152 + 2 + 152 = 306 septets, the capacity of 2 segments; the € cannot end segment 1
      const body = 'a'.repeat(152) + '€' + 'a'.repeat(152);
      expect(countSegments(body)).toMatchObject({
        encoding: 'GSM-7',
        units: 306,
        segments: 3,
        perSegment: 153,
        firstMoved: { char: '€', index: 152 },
      });
      expect(countSegments('a'.repeat(151) + '€' + 'a'.repeat(153))).toMatchObject({ units: 306, segments: 2 });
      expect(countSegments('a'.repeat(158) + '€')).toMatchObject({ units: 160, segments: 1 });
    });

    it('moves a surrogate pair that would straddle a UCS-2 boundary whole to the next segment', () => {
      // 66 + 2 + 66 = 134 UTF-16 units, the capacity of 2 segments; the emoji cannot end segment 1
      const body = 'я'.repeat(66) + '😀' + 'я'.repeat(66);
      expect(countSegments(body)).toMatchObject({
        encoding: 'UCS-2',
        units: 134,
        segments: 3,
        perSegment: 67,
        firstUcs2: { char: 'я', index: 0 },
        firstMoved: { char: '😀', index: 66 },
      });
      expect(countSegments('я'.repeat(65) + '😀' + 'я'.repeat(67))).toMatchObject({ units: 134, segments: 2 });
      // one segment holds 70 units whole: no boundary to straddle
      expect(countSegments('я'.repeat(68) + '😀')).toMatchObject({ units: 70, segments: 1 });
    });

    it('refuses such a body at the segment limit, naming the character, the encoding and why', () => {
      const gsm = 'a'.repeat(152) + '€' + 'a'.repeat(152);
      expect(segmentProblem(gsm, 2)).toBe(
        'Shorten body: 2 segments allow 306 GSM-7 characters, and it has 306 (extension characters such as € { } [ ] count as two), ' +
          'which take 3 segments: a segment never splits an extension character, so "€" (U+20AC) at position 152 moves whole to the next one.',
      );
      expect(segmentProblem(gsm, 3)).toBeUndefined();
      const ucs = 'я'.repeat(66) + '😀' + 'я'.repeat(66);
      expect(segmentProblem(ucs, 2)).toBe(
        'Shorten body, or replace "я" (U+044F) at position 0 (and any other character outside GSM-7) to get 306: ' +
          'that character needs UCS-2, which allows 134 characters in 2 segments, and body has 134, ' +
          'which take 3 segments: a segment never splits a character of two UTF-16 units, so "😀" (U+1F600) at position 66 moves whole to the next one.',
      );
    });

    /** The carriers' rule stated another way: cut every 153 (67) units, one earlier inside a pair. */
    function referenceSegments(text: string): number {
      const ucs2 = countSegments(text).encoding === 'UCS-2';
      const units: boolean[] = []; // true: the second unit of a pair
      for (const char of text) {
        const width = ucs2 ? char.length : '\f^{}\\[~]|€'.includes(char) ? 2 : 1;
        units.push(false);
        if (width === 2) units.push(true);
      }
      if (units.length <= (ucs2 ? 70 : 160)) return 1;
      const size = ucs2 ? 67 : 153;
      let segments = 0;
      for (let start = 0; start < units.length; segments++) {
        let end = Math.min(start + size, units.length);
        if (end < units.length && units[end]) end -= 1;
        start = end;
      }
      return segments;
    }

    it('agrees with the reference on generated bodies (fixed seed)', async () => {
      // Bodies of k full segments give or take a unit, with a few pairs anywhere: where a pair
      // lands on a boundary decides between k and k + 1 segments.
      const body = (single: string, pair: string, size: number) =>
        fc
          .record({
            k: fc.integer({ min: 2, max: 4 }),
            slack: fc.integer({ min: -2, max: 1 }),
            at: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
          })
          .map(({ k, slack, at }) => {
            const pieces = Array<string>(k * size + slack - 2 * at.length).fill(single);
            for (const i of at) pieces.splice(i % (pieces.length + 1), 0, pair);
            return pieces;
          });
      const gsm = fc.oneof(body('a', '€', 153), body('é', '{', 153));
      const ucs2 = fc.oneof(body('я', '😀', 67), body('€', '𝄞', 67));
      await assertProperty(
        'sms segments match the carriers rule',
        fc.property(fc.oneof(gsm, ucs2), (pieces) => {
          const text = pieces.join('');
          expect(countSegments(text).segments).toBe(referenceSegments(text));
        }),
        { numRuns: 500 },
      );
    });
  });
});
