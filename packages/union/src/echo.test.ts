/** Client data in messages: bounded, well-formed, and never coerced through the value. */
import { describe, expect, it } from 'vitest';
import { clipText, describeKey, describeValue, ECHO_MAX_CHARS, loneSurrogateAt } from './echo.js';

const hostile = [
  JSON.parse('{"toString":1,"valueOf":1}'),
  JSON.parse('{"__proto__":{"toString":1}}'),
  [JSON.parse('{"toString":1}')],
  Object.create(null),
  Symbol('s'),
  10n,
  () => 1,
];

describe('echo', () => {
  it('describes any value without calling into it', () => {
    for (const value of hostile) expect(() => describeValue(value)).not.toThrow();
    expect(describeValue(JSON.parse('{"toString":1}'))).toBe('an object');
    expect(describeValue([1, 2])).toBe('an array of 2 items');
    expect(describeValue([[[]]])).toBe('an array of 1 item');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue(JSON.parse('1e400'))).toBe('Infinity');
    expect(describeValue('fax')).toBe('"fax"');
  });

  it('clips long text, never inside a surrogate pair, and shows lone surrogates as U+FFFD', () => {
    const long = describeValue('x'.repeat(1_000_000));
    expect(long.length).toBeLessThan(ECHO_MAX_CHARS + 40);
    expect(long).toContain('(1000000 characters)');
    const pairs = clipText('😀'.repeat(100));
    expect(loneSurrogateAt(pairs)).toBe(-1);
    expect(clipText('a\ud800b')).toBe('a\ufffdb');
    expect(loneSurrogateAt(describeValue('\udc00'.repeat(100)))).toBe(-1);
  });

  it('names keys bare when plain, quoted otherwise, always clipped', () => {
    expect(describeKey('subject')).toBe('subject');
    expect(describeKey('__proto__')).toBe('__proto__');
    expect(describeKey('a b')).toBe('"a b"');
    expect(describeKey('')).toBe('""');
    expect(describeKey('k'.repeat(10_000)).length).toBeLessThan(ECHO_MAX_CHARS + 40);
    expect(describeKey(3)).toBe('3');
  });

  it('finds lone surrogates, not pairs', () => {
    expect(loneSurrogateAt('ok 😀')).toBe(-1);
    expect(loneSurrogateAt('ab\udc00')).toBe(2);
    expect(loneSurrogateAt('😀'.slice(0, 1))).toBe(0);
  });
});
