import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertProperty } from '../../../test/helpers/property.js';
import { neutraliseBroadcasts } from './mentions.js';

const WJ = '\u2060';
const n = (text: string) => neutraliseBroadcasts(text).text;

/**
 * What Slack would read as a broadcast: any `<!…>` whose command (before `|` and `^`, any
 * case or spacing) is here, channel, everyone, group or subteam, or is none of the commands
 * known to page no one (a date), or a plain @here-like word.
 */
const PAGING_WORDS = new Set(['here', 'channel', 'everyone', 'group']);
function pagesMany(text: string): boolean {
  for (const m of text.matchAll(/<\s*!([^<>]*)>/g)) {
    const segments = m[1]!
      .split('|')[0]!
      .split('^')
      .map((s) => s.trim().toLowerCase());
    if (segments[0] !== 'date' || segments.some((s) => PAGING_WORDS.has(s) || s.startsWith('subteam'))) return true;
  }
  return /(?<![\w.%+-])@(here|channel|everyone|group)(?![\w-])/i.test(text);
}

describe('neutraliseBroadcasts', () => {
  it('renders <!channel>, <!here>, <!everyone> as inert text that reads the same', () => {
    expect(neutraliseBroadcasts('<!channel> deploy failed, <!here> and <!everyone> look')).toEqual({
      text: `@${WJ}channel deploy failed, @${WJ}here and @${WJ}everyone look`,
      count: 3,
    });
  });

  it('covers labels, case, spacing, user groups and commands it does not know', () => {
    expect(n('<!here|here>')).toBe(`@${WJ}here`);
    expect(n('<!channel|@channel>')).toBe(`@${WJ}channel`);
    expect(n('<!CHANNEL>')).toBe(`@${WJ}channel`);
    expect(n('< !here >')).toBe(`@${WJ}here`);
    expect(n('<! everyone|all of you>')).toBe(`@${WJ}everyone`);
    expect(n('<!group>')).toBe(`@${WJ}group`);
    expect(n('<!subteam^S0123ABCD|@oncall>')).toBe(`@${WJ}oncall`);
    expect(n('<!subteam^S0123ABCD>')).toBe(`@${WJ}subteam`);
    expect(n('<!somethingnew^X>')).toBe(`@${WJ}somethingnew`);
    expect(n(`<!\u200bhere>`)).not.toContain('<!');
  });

  it('neutralises plain @here, @channel, @everyone, @group, but not addresses or longer words', () => {
    expect(n('@here ping, @Channel! (@everyone) @group')).toBe(`@${WJ}here ping, @${WJ}Channel! (@${WJ}everyone) @${WJ}group`);
    expect(n('mail ops@here.example or @channels or @here-team or @oncall')).toBe(
      'mail ops@here.example or @channels or @here-team or @oncall',
    );
  });

  it('leaves what pages no one or one person alone', () => {
    const text = 'Deploy <@U0123ABCD> in <#C0123ABCD|ops> at <!date^1712345678^{date_short}|Apr 5> <https://x.example|link> a < b > c';
    expect(neutraliseBroadcasts(text)).toEqual({ text, count: 0 });
  });

  it('cannot be made to assemble a mention out of the pieces around one', () => {
    expect(n('<!<!here>here>')).toBe(`&lt;!@${WJ}herehere>`);
    expect(n('<<!here>!channel>')).toBe(`<@${WJ}here!channel>`);
    expect(pagesMany(n('<!<!<!here>here>here>'))).toBe(false);
  });

  it('leaves nothing that pages many, is idempotent, and changes text without mentions not at all (fixed seed)', async () => {
    const piece = fc.constantFrom(
      '<',
      '>',
      '!',
      '|',
      '^',
      ' ',
      '@',
      'here',
      'channel',
      'Everyone',
      'group',
      'subteam',
      'date^1',
      'x',
      '.',
      '\u200b',
    );
    await assertProperty(
      'broadcast mentions are neutralised',
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const once = n(text);
        expect(pagesMany(once)).toBe(false);
        expect(n(once)).toBe(once);
        if (!/<\s*!/.test(text) && !pagesMany(text)) expect(once).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps nothing with `date^` past the start of a command, whatever the command or label (fixed seed)', async () => {
    expect(n('<!here|date^1>')).toBe(`@${WJ}here`);
    expect(n('<!channel^date^1^{date}|x>')).toBe(`@${WJ}channel`);
    expect(n('<!subteam^S1|date^1^{date}>')).toBe(`@${WJ}date^1^{date}`);
    const command = fc.constantFrom(
      'here',
      'channel',
      'everyone',
      'group',
      'subteam^S0123',
      'Here',
      ' channel ',
      'date^1^{date}',
      'date^1',
      'date^1712345678^{date_short}^https://x.example',
    );
    const label = fc
      .array(fc.constantFrom('date^1', 'date^1^{date}', '^', '|', ' ', '@', 'here', 'x'), { maxLength: 6 })
      .map((p) => p.join(''));
    await assertProperty(
      'a special command with any label pages no one once neutralised',
      fc.property(command, fc.option(label), fc.array(command, { maxLength: 2 }), (cmd, lab, extra) => {
        const inner = [cmd, ...extra].join('^') + (lab === null ? '' : `|${lab}`);
        const once = n(`<!${inner}>`);
        expect(pagesMany(once)).toBe(false);
        expect(n(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });

  it('stays linear on hostile input (40,000 characters)', () => {
    const hostile = '<!'.repeat(20_000);
    expect(n(hostile)).toBe('&lt;!'.repeat(20_000));
    expect(n('< '.repeat(20_000)).length).toBe(40_000);
  });
});
