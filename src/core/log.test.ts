import { describe, expect, it, vi } from 'vitest';
import { createLogger } from './log.js';

describe('createLogger', () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, write: (l: string) => void lines.push(l) };
  };

  it('writes one JSON line with time, level, msg, the constant fields and the line fields', () => {
    const { lines, write } = capture();
    createLogger('info', write, { tool: 't' }).child({ client: 'bot "1"' }).info('sent', { attempts: 1, skip: undefined });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('}\n')).toBe(true);
    const line = JSON.parse(lines[0]!);
    expect(Object.keys(line)).toEqual(['time', 'level', 'msg', 'tool', 'client', 'attempts']);
    expect(line).toMatchObject({ level: 'info', msg: 'sent', tool: 't', client: 'bot "1"', attempts: 1 });
  });

  it('lets a line field replace a constant one of the same name, once in the line', () => {
    const { lines, write } = capture();
    const log = createLogger('debug', write).child({ via: 'sms', msg: 'x' });
    log.warn('failed', { via: 'email' });
    log.debug('plain');
    expect(lines.map((l) => l.match(/"via"/g)?.length)).toEqual([1, 1]);
    expect(lines.map((l) => l.match(/"msg"/g)?.length)).toEqual([1, 1]);
    expect(JSON.parse(lines[0]!)).toMatchObject({ via: 'email', msg: 'x' });
    expect(JSON.parse(lines[1]!)).toMatchObject({ via: 'sms' });
  });

  it('drops lines below its level', () => {
    const { lines, write } = capture();
    createLogger('warn', write).info('quiet');
    expect(lines).toEqual([]);
  });

  it('writes to stderr after the current turn, every line of the turn in one write', async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (writes.push(String(chunk)), true));
    try {
      const log = createLogger('info');
      log.info('one');
      log.child({ call: 2 }).warn('two');
      expect(writes).toEqual([]);
      await new Promise((r) => setImmediate(r));
      expect(writes).toHaveLength(1);
      expect(
        writes[0]!
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).msg),
      ).toEqual(['one', 'two']);
    } finally {
      spy.mockRestore();
    }
  });
});
