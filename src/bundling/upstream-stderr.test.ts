import { describe, expect, it } from 'vitest';
import { MAX_STDERR_LINE, upstreamStderrLine } from './upstream-stderr.js';

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
      time: 't0', level: 'warn', msg: 'send refused', code: 'RECIPIENT_NOT_ALLOWED', nested: { a: [1] }, upstream: 'notify',
    });
  });

  it("sets the id itself: an upstream's own `upstream` field cannot pose as another server", () => {
    expect(parse(upstreamStderrLine('{"msg":"x","upstream":"github"}', 'evil', at)).upstream).toBe('evil');
  });

  it('wraps any other line, JSON that is no object included', () => {
    for (const line of ['Starting default (STDIO) server...', '', '[1,2]', '"text"', '42', 'null', '{not json', '  {"a":1']) {
      expect(parse(upstreamStderrLine(line, 'ev-a', at)), line).toEqual({ time: at.toISOString(), level: 'info', msg: line, upstream: 'ev-a' });
    }
  });

  it('cuts an overlong line and never parses it', () => {
    const long = JSON.stringify({ msg: 'x'.repeat(MAX_STDERR_LINE) });
    const out = parse(upstreamStderrLine(long, 'big', at));
    expect(out).toMatchObject({ level: 'info', upstream: 'big', truncated: true });
    expect((out.msg as string).length).toBe(MAX_STDERR_LINE);
  });
});
