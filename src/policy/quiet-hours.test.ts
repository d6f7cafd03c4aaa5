import { describe, expect, it } from 'vitest';
import { parseQuietHours, quietUntil } from './quiet-hours.js';

const at = (iso: string) => Date.parse(iso);
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
const until = (raw: string, via: string, when: string) => iso(quietUntil(parseQuietHours(raw, ['email', 'sms']), via, at(when))?.until);

describe('NOTIFY_QUIET_HOURS', () => {
  it('parses windows per channel and for every channel, and refuses what it cannot use', () => {
    expect(parseQuietHours('sms=22:00-07:00@Europe/Berlin, *=23:30-06:15@UTC', ['sms'])).toEqual([
      { via: 'sms', start: 79_200, end: 25_200, zone: 'Europe/Berlin', text: '22:00-07:00@Europe/Berlin' },
      { via: '*', start: 84_600, end: 22_500, zone: 'UTC', text: '23:30-06:15@UTC' },
    ]);
    expect(parseQuietHours(undefined, ['sms'])).toEqual([]);
    expect(() => parseQuietHours('sms=22-07@UTC', ['sms'])).toThrow(/must look like sms=22:00-07:00@Europe\/Berlin/);
    expect(() => parseQuietHours('fax=22:00-07:00@UTC', ['sms'])).toThrow(/"fax" is not a channel/);
    expect(() => parseQuietHours('sms=22:00-07:00@Mars/Olympus', ['sms'])).toThrow(/not an IANA time zone/);
    expect(() => parseQuietHours('sms=25:00-07:00@UTC', ['sms'])).toThrow(/hours run 00-23/);
    expect(() => parseQuietHours('sms=07:00-07:00@UTC', ['sms'])).toThrow(/same time/);
  });

  it('holds a send inside a window that crosses midnight until the window ends, on either side of midnight', () => {
    const w = 'sms=22:00-07:00@Europe/Berlin';
    // January: CET, UTC+1.
    expect(until(w, 'sms', '2026-01-14T21:30:00Z')).toBe('2026-01-15T06:00:00.000Z'); // 22:30 local
    expect(until(w, 'sms', '2026-01-15T02:00:00Z')).toBe('2026-01-15T06:00:00.000Z'); // 03:00 local
    expect(until(w, 'sms', '2026-01-15T06:00:00Z')).toBeUndefined(); // 07:00 local: the window has ended
    expect(until(w, 'sms', '2026-01-15T20:59:59Z')).toBeUndefined(); // 21:59:59 local
    expect(until(w, 'sms', '2026-01-15T21:00:00Z')).toBe('2026-01-16T06:00:00.000Z'); // 22:00 local: starts
    expect(until(w, 'email', '2026-01-15T02:00:00Z')).toBeUndefined(); // another channel
    expect(until('*=22:00-07:00@Europe/Berlin', 'email', '2026-01-15T02:00:00Z')).toBe('2026-01-15T06:00:00.000Z');
  });

  it('a window within one day', () => {
    expect(until('email=12:00-13:00@America/New_York', 'email', '2026-07-01T16:30:00Z')).toBe('2026-07-01T17:00:00.000Z'); // EDT, 12:30 local
    expect(until('email=12:00-13:00@America/New_York', 'email', '2026-07-01T17:00:00Z')).toBeUndefined();
  });

  it('spring forward (Berlin, 2026-03-29, 02:00 CET → 03:00 CEST): the window ends at 07:00 CEST, one hour earlier in UTC', () => {
    const w = 'sms=22:00-07:00@Europe/Berlin';
    expect(until(w, 'sms', '2026-03-28T22:00:00Z')).toBe('2026-03-29T05:00:00.000Z'); // 23:00 CET
    expect(until(w, 'sms', '2026-03-29T01:30:00Z')).toBe('2026-03-29T05:00:00.000Z'); // 03:30 CEST, just past the gap
    expect(until(w, 'sms', '2026-03-29T05:00:00Z')).toBeUndefined(); // 07:00 CEST
    expect(until(w, 'sms', '2026-03-29T04:59:00Z')).toBe('2026-03-29T05:00:00.000Z');
  });

  it('spring forward: a window ending inside the skipped hour ends when the clock jumps over it', () => {
    // 02:30 does not exist on 2026-03-29 in Berlin: at 01:00Z the clock goes from 02:00 CET to 03:00 CEST.
    expect(until('sms=23:00-02:30@Europe/Berlin', 'sms', '2026-03-28T23:30:00Z')).toBe('2026-03-29T01:00:00.000Z');
  });

  it('fall back (Berlin, 2026-10-25, 03:00 CEST → 02:00 CET): the window ends at 07:00 CET, one hour later in UTC', () => {
    const w = 'sms=22:00-07:00@Europe/Berlin';
    expect(until(w, 'sms', '2026-10-24T21:00:00Z')).toBe('2026-10-25T06:00:00.000Z'); // 23:00 CEST
    expect(until(w, 'sms', '2026-10-25T00:30:00Z')).toBe('2026-10-25T06:00:00.000Z'); // 02:30 CEST (first)
    expect(until(w, 'sms', '2026-10-25T01:30:00Z')).toBe('2026-10-25T06:00:00.000Z'); // 02:30 CET (second)
    expect(until(w, 'sms', '2026-10-25T05:59:00Z')).toBe('2026-10-25T06:00:00.000Z');
    expect(until(w, 'sms', '2026-10-25T06:00:00Z')).toBeUndefined();
  });

  it('fall back: a window ending in the repeated hour ends at its first occurrence', () => {
    expect(until('sms=23:00-02:30@Europe/Berlin', 'sms', '2026-10-24T22:00:00Z')).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST
  });

  it('US zones change on their own days (New York, 2026-03-08)', () => {
    expect(until('sms=22:00-07:00@America/New_York', 'sms', '2026-03-08T05:00:00Z')).toBe('2026-03-08T11:00:00.000Z'); // 00:00 EST → 07:00 EDT
  });

  it('of two overlapping windows, the later end holds', () => {
    expect(until('sms=22:00-07:00@UTC,*=21:00-08:00@UTC', 'sms', '2026-01-15T23:00:00Z')).toBe('2026-01-16T08:00:00.000Z');
  });

  it('accepts seconds, HH:MM:SS, for a window that ends within the minute', () => {
    expect(parseQuietHours('sms=10:00:05-10:00:12@UTC', ['sms'])).toEqual([
      { via: 'sms', start: 36_005, end: 36_012, zone: 'UTC', text: '10:00:05-10:00:12@UTC' },
    ]);
    expect(until('sms=10:00:05-10:00:12@UTC', 'sms', '2026-01-15T10:00:04.999Z')).toBeUndefined();
    expect(until('sms=10:00:05-10:00:12@UTC', 'sms', '2026-01-15T10:00:05Z')).toBe('2026-01-15T10:00:12.000Z');
    expect(until('sms=10:00:05-10:00:12@UTC', 'sms', '2026-01-15T10:00:11.999Z')).toBe('2026-01-15T10:00:12.000Z');
    expect(until('sms=10:00:05-10:00:12@UTC', 'sms', '2026-01-15T10:00:12Z')).toBeUndefined();
    // Mixed forms, in a zone with an offset: 21:59:30 CET is 20:59:30 UTC.
    expect(until('sms=21:00-21:59:30@Europe/Berlin', 'sms', '2026-01-15T20:59:00Z')).toBe('2026-01-15T20:59:30.000Z');
    expect(() => parseQuietHours('sms=10:00:60-11:00@UTC', ['sms'])).toThrow(/must look like/);
    expect(() => parseQuietHours('sms=10:00:00-10:00@UTC', ['sms'])).toThrow(/same time/);
  });
});
