import { describe, expect, it } from 'vitest';
import { BoundedLineSplitter, MAX_STDERR_LINE, upstreamStderrLine } from './upstream-stderr.js';

const at = new Date('2026-01-02T03:04:05.000Z');
const parse = (line: string) => {
  expect(line.endsWith('\n')).toBe(true);
  expect(line.slice(0, -1)).not.toContain('\n');
  return JSON.parse(line) as Record<string, unknown>;
};

describe('upstreamStderrLine', () => {
  it('passes a JSON log line through as an object, with the upstream id added', () => {
    const line = JSON.stringify({ time: 't0', level: 'warn', msg: 'send refused', code: 'RECIPIENT_NOT_ALLOWED', nested: { a: [1] } });
    expect(parse(upstreamStderrLine(line, 'notify', at))).toEqual({
      time: 't0',
      level: 'warn',
      msg: 'send refused',
      code: 'RECIPIENT_NOT_ALLOWED',
      nested: { a: [1] },
      upstream: 'notify',
    });
  });

  it("sets the id itself: an upstream's own `upstream` field cannot pose as another server", () => {
    expect(parse(upstreamStderrLine('{"msg":"x","upstream":"github"}', 'evil', at)).upstream).toBe('evil');
  });

  it('wraps any other line, JSON that is no object included', () => {
    for (const line of ['Starting default (STDIO) server...', '', '[1,2]', '"text"', '42', 'null', '{not json', '  {"a":1']) {
      expect(parse(upstreamStderrLine(line, 'ev-a', at)), line).toEqual({
        time: at.toISOString(),
        level: 'info',
        msg: line,
        upstream: 'ev-a',
      });
    }
  });

  it('cuts an overlong line and never parses it', () => {
    const long = JSON.stringify({ msg: 'x'.repeat(MAX_STDERR_LINE) });
    const out = parse(upstreamStderrLine(long, 'big', at));
    expect(out).toMatchObject({ level: 'info', upstream: 'big', truncated: true });
    expect((out.msg as string).length).toBe(MAX_STDERR_LINE);
  });
});

describe('BoundedLineSplitter: lines are cut while reading', () => {
  const collect = (max: number) => {
    const lines: [string, boolean][] = [];
    const splitter = new BoundedLineSplitter(max, (line, truncated) => void lines.push([line, truncated]));
    return { lines, splitter };
  };

  it('hands an over-long line on at the bound, before its newline, and drops the rest of it', () => {
    const { lines, splitter } = collect(10);
    splitter.push('0123456');
    expect(lines).toEqual([]);
    splitter.push('789abcdef');
    expect(lines).toEqual([['0123456789', true]]);
    splitter.push('more of the same line');
    splitter.push('\nnext\n');
    expect(lines).toEqual([
      ['0123456789', true],
      ['next', false],
    ]);
  });

  it('holds at most the bound for 600 MiB with no newline, and hands on one line', () => {
    const { lines, splitter } = collect(MAX_STDERR_LINE);
    const mib = Buffer.alloc(1 << 20, 'A');
    let most = 0;
    for (let i = 0; i < 600; i++) {
      splitter.push(mib);
      most = Math.max(most, splitter.buffered);
    }
    expect(most).toBeLessThanOrEqual(MAX_STDERR_LINE);
    expect(lines).toHaveLength(1);
    expect(lines[0]![0]).toHaveLength(MAX_STDERR_LINE);
    expect(lines[0]![1]).toBe(true);
    splitter.push('\nafter');
    splitter.end();
    expect(lines.at(-1)).toEqual(['after', false]);
  });

  it('splits CRLF lines, keeps characters split across chunks, and ends the last line at end()', () => {
    const { lines, splitter } = collect(100);
    const euro = Buffer.from('€', 'utf8');
    splitter.push(Buffer.concat([Buffer.from('a\r\nb'), euro.subarray(0, 1)]));
    splitter.push(Buffer.concat([euro.subarray(1), Buffer.from('\n\nlast')]));
    splitter.end();
    expect(lines).toEqual([
      ['a', false],
      ['b€', false],
      ['', false],
      ['last', false],
    ]);
  });

  it('never splits a surrogate pair at the bound', () => {
    const { lines, splitter } = collect(5);
    splitter.push('abcd😀xyz\n');
    expect(lines).toEqual([['abcd', true]]);
    expect(JSON.parse(upstreamStderrLine(lines[0]![0], 'u', at, true))).toMatchObject({ msg: 'abcd', truncated: true });
  });
});
