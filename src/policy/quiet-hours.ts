/**
 * Quiet hours (NOTIFY_QUIET_HOURS, `sms=22:00-07:00@Europe/Berlin,*=23:00-06:00@UTC`): a daily
 * window per channel in an IANA zone, read on the zone's wall clock, so daylight saving moves
 * the window with the clock. Built on Intl (the zone data Node ships); no dependency.
 */
import { ConfigError, list } from '../core/env.js';

export interface QuietWindow {
  /** A channel name, or `*` for every channel. */
  via: string;
  /** Seconds after local midnight; the window is [start, end), and crosses midnight when end <= start. */
  start: number;
  end: number;
  zone: string;
  /** As configured, for messages: `22:00-07:00@Europe/Berlin`. */
  text: string;
}

// HH:MM, or HH:MM:SS where a window must end within the minute (a short window in a test, say).
const TIME = '([0-2]\\d):([0-5]\\d)(?::([0-5]\\d))?';
const ITEM = new RegExp(`^([a-z0-9*_-]+)=${TIME}-${TIME}@([A-Za-z0-9_+\\-/]+)$`);
const clockText = (h: string, m: string, s: string | undefined) => `${h}:${m}${s === undefined ? '' : `:${s}`}`;

export function parseQuietHours(raw: string | undefined, channels: readonly string[]): QuietWindow[] {
  return list(raw ?? '').map((item) => {
    const m = ITEM.exec(item);
    if (!m) throw new ConfigError(`NOTIFY_QUIET_HOURS: "${item}" must look like sms=22:00-07:00@Europe/Berlin`);
    const [, via, sh, sm, ss, eh, em, es, zone] = m as unknown as [
      string,
      string,
      string,
      string,
      string | undefined,
      string,
      string,
      string | undefined,
      string,
    ];
    if (via !== '*' && !channels.includes(via))
      throw new ConfigError(`NOTIFY_QUIET_HOURS: "${via}" is not a channel; use ${[...channels, '*'].join(', ')}`);
    const start = Number(sh) * 3600 + Number(sm) * 60 + Number(ss ?? 0);
    const end = Number(eh) * 3600 + Number(em) * 60 + Number(es ?? 0);
    if (Number(sh) > 23 || Number(eh) > 23) throw new ConfigError(`NOTIFY_QUIET_HOURS: "${item}": hours run 00-23`);
    if (start === end) throw new ConfigError(`NOTIFY_QUIET_HOURS: "${item}" starts and ends at the same time; give a window`);
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
    } catch {
      throw new ConfigError(`NOTIFY_QUIET_HOURS: "${zone}" is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)`);
    }
    return { via, start, end, zone, text: `${clockText(sh, sm, ss)}-${clockText(eh, em, es)}@${zone}` };
  });
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall clock of `zone` at instant `t`: its fields, as if they were UTC. */
function wallClock(t: number, zone: string): { y: number; mo: number; d: number; second: number; asUtc: number } {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(t).map((x) => [x.type, x.value]));
  const [y, mo, d, h, mi, s] = [p.year, p.month, p.day, p.hour, p.minute, p.second].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { y, mo, d, second: h * 3600 + mi * 60 + s, asUtc: Date.UTC(y, mo - 1, d, h, mi, s) + (((t % 1000) + 1000) % 1000) };
}

/** The zone's offset from UTC at instant `t`, in ms. */
const offsetAt = (t: number, zone: string) => wallClock(t, zone).asUtc - t;

/**
 * The first instant at which `zone`'s clock reads `second` (of the day) on local date (y, mo, d). On a
 * spring-forward day a time inside the gap does not exist: the clock jumps past it, so the
 * window ends at the jump (e.g. 02:30 → 03:00 CEST). On a fall-back day a time that occurs
 * twice is its first occurrence.
 */
function instantOf(y: number, mo: number, d: number, second: number, zone: string): number {
  const wall = Date.UTC(y, mo - 1, d, 0, 0, second);
  // The two offsets in force around that wall time; try the earlier instant first.
  const candidates = [...new Set([offsetAt(wall - 86_400_000 / 2, zone), offsetAt(wall + 86_400_000 / 2, zone), offsetAt(wall, zone)])]
    .map((off) => wall - off)
    .sort((a, b) => a - b);
  for (const t of candidates) if (wallClock(t, zone).asUtc === wall) return t;
  // In the gap: the instant the clock jumps over it is where both offsets' readings meet.
  const [lo, hi] = [candidates[0]!, candidates[candidates.length - 1]!];
  let a = lo;
  let b = hi;
  while (b - a > 60_000) {
    const mid = Math.floor((a + b) / 2 / 60_000) * 60_000;
    if (wallClock(mid, zone).asUtc < wall) a = mid;
    else b = mid;
  }
  return b;
}

const inside = (w: QuietWindow, second: number) =>
  w.start < w.end ? second >= w.start && second < w.end : second >= w.start || second < w.end;

/**
 * When a send of channel `via` at instant `t` may leave: null when no window holds it, else
 * the instant the window it is in ends (the latest end, where two windows overlap it).
 */
export function quietUntil(windows: readonly QuietWindow[], via: string, t: number): { until: number; window: QuietWindow } | null {
  let found: { until: number; window: QuietWindow } | null = null;
  for (const w of windows) {
    if (w.via !== via && w.via !== '*') continue;
    const clock = wallClock(t, w.zone);
    if (!inside(w, clock.second)) continue;
    // The end is today when it is still ahead on the clock, else tomorrow.
    const day = clock.second < w.end ? 0 : 1;
    const date = new Date(Date.UTC(clock.y, clock.mo - 1, clock.d + day));
    const until = instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), w.end, w.zone);
    if (until > t && (found === null || until > found.until)) found = { until, window: w };
  }
  return found;
}
