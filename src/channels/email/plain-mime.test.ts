import fc from 'fast-check';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { describe, expect, it } from 'vitest';
import { assertProperty } from '../../../test/helpers/property.js';
import type { MailParts } from './mime.js';
import { plainMime } from './plain-mime.js';

/** What nodemailer writes for the same mail, with the options mime.ts gives it. */
async function composed(mail: MailParts, text: string): Promise<string> {
  const raw = await new MailComposer({ ...mail, text, disableFileAccess: true, disableUrlAccess: true }).compile().build();
  return raw.toString('utf8');
}

/** The two differ only in what is random or timed: the boundary and the Date. */
function normalized(raw: string): string {
  const boundary = /boundary="([^"]+)"/.exec(raw)?.[1];
  expect(boundary).toBeDefined();
  return raw.replaceAll(boundary!, 'BOUNDARY').replace(/^Date: .*$/m, 'Date: D');
}

const base: MailParts = {
  from: 'notify-mcp <notify@notify-mcp.local>',
  to: ['ops@example.com'],
  subject: 'Deploy done',
  html: '<p>Deployed <b>v1.2</b></p>',
  messageId: '<ntf_0123abcd@notify-mcp.local>',
  headers: { 'X-Notification-Id': 'ntf_0123abcd' },
};

describe('plainMime', () => {
  it.each([
    ['the usual notification', base, 'Deployed v1.2'],
    ['the default sender', { ...base, from: 'notify-mcp <notify-mcp@localhost>', messageId: '<ntf_1@localhost>' }, 'Deployed v1.2'],
    [
      'several recipients and a reply-to',
      { ...base, to: ['a@example.com', 'b.c+d@mail.example.org'], replyTo: 'ops-team@example.com' },
      'x',
    ],
    // 'To: ' and 71 characters: the longest header line nodemailer does not fold.
    ['a header line of 75 characters', { ...base, to: [`${'a'.repeat(59)}@example.com`] }, 'x'],
    ['a bare sender and multi-line parts', { ...base, from: 'notify@example.com', html: '<p>a</p>\n<p>b</p>\n' }, 'a\n\nb\n'],
  ])('writes what MailComposer writes: %s', async (_, mail, text) => {
    const raw = plainMime(mail, text);
    expect(raw).toBeDefined();
    expect(normalized(raw!)).toBe(normalized(await composed(mail, text)));
    expect(raw).toMatch(/^Date: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000\r$/m);
  });

  it('writes the bytes MailComposer writes, boundary and Date included, when both are given', async () => {
    // The channel's boundary: a notification id's 32 hex digits.
    const mail = { ...base, date: new Date(Date.UTC(2026, 11, 1, 3, 7, 9)), baseBoundary: '0123456789abcdef0123456789abcdef' };
    expect(plainMime(mail, 'Deployed v1.2')).toBe(await composed(mail, 'Deployed v1.2'));
  });

  it('writes the Date header as nodemailer does, for any date', async () => {
    // Mostly years of four digits, which are written from the UTC fields; any other goes to toUTCString.
    const fourDigitYears = fc.date({
      min: new Date('1000-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59.999Z'),
      noInvalidDate: true,
    });
    const anyDate = fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true });
    await assertProperty(
      'plainMime Date header',
      fc.property(fc.oneof({ weight: 4, arbitrary: fourDigitYears }, anyDate), (date) => {
        const line = /^Date: (.*)\r$/m.exec(plainMime({ ...base, date }, 'x')!)![1];
        // nodemailer's own expression (lib/mime-node).
        expect(line).toBe(date.toUTCString().replace(/GMT/, '+0000'));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['a name that needs quotes', { ...base, from: '"Ops, Inc." <ops@example.com>' }, 'x'],
    ['a non-ASCII subject', { ...base, subject: 'Déploiement' }, 'x'],
    ['a non-ASCII body', base, 'café'],
    ['a line over 76 characters', base, 'x'.repeat(77)],
    ['a CR in the text', base, 'a\r\nb'],
    ['an upper-case domain', { ...base, to: ['ops@Example.com'] }, 'x'],
    ['a header line of 76 characters', { ...base, to: [`${'a'.repeat(60)}@example.com`] }, 'x'],
    ['a subject with a double quote', { ...base, subject: 'the "prod" deploy' }, 'x'],
    ['a subject that reads as an encoded word', { ...base, subject: '=?UTF-8?Q?x?=' }, 'x'],
    ['a subject that needs folding', { ...base, subject: 'word '.repeat(20).trim() }, 'x'],
    ['an empty text part', base, ''],
    ['a line that starts as a delimiter does', base, 'hi\n-- \nsig'],
  ])('leaves to MailComposer %s', (_, mail, text) => {
    expect(plainMime(mail, text)).toBeUndefined();
  });

  it('agrees with MailComposer on every generated mail it takes', async () => {
    // Mostly what the fast path takes, with every kind of character it must refuse mixed in.
    const pieces = (common: string, odd: string[]) =>
      fc.array(fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...common.split('')) }, fc.constantFrom(...odd)), {
        minLength: 1,
        maxLength: 14,
      });
    const subject = pieces('aZ09.-', [' ', '\n', '"', '=?', 'é', 'x'.repeat(70)]).map((a) => a.join(''));
    // A line starting `--` is left to MailComposer (base64): an odd piece, so the fast path is still taken often.
    const text = pieces('aZ09 ._\n', ['-', '\t', '\r', '"', '=?', '<', '@', ',', 'é', '\u0007', '\x7f', 'x'.repeat(40)]).map((a) =>
      a.join(''),
    );
    const local = fc.stringMatching(/^[A-Za-z0-9_%+-]{1,8}(\.[A-Za-z0-9]{1,4})?$/);
    const domain = fc.oneof(
      { weight: 4, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,6}(\.[a-z]{2,4})?$/) },
      fc.stringMatching(/^[a-zA-Z0-9-]{1,8}(\.[a-z0-9-]{1,4})?$/),
    );
    const addr = fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`);
    const named = fc
      .tuple(
        fc.oneof(
          { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9_.-]{1,6}( [A-Za-z0-9_.-]{1,6})?$/) },
          fc.stringMatching(/^[A-Za-z0-9_ ,."-]{1,12}$/),
        ),
        addr,
      )
      .map(([n, a]) => `${n} <${a}>`);
    const mailbox = fc.oneof(addr, named);
    let taken = 0;
    await assertProperty(
      'plainMime matches MailComposer',
      fc.asyncProperty(
        fc.record({
          from: mailbox,
          to: fc.array(mailbox, { minLength: 1, maxLength: 3 }),
          replyTo: fc.option(mailbox),
          subject,
          html: text,
        }),
        text,
        async ({ replyTo, ...m }, t) => {
          const mail: MailParts = { ...base, ...m, ...(replyTo === null ? {} : { replyTo }) };
          const raw = plainMime(mail, t);
          if (raw === undefined) return;
          taken++;
          expect(normalized(raw)).toBe(normalized(await composed(mail, t)));
        },
      ),
      { numRuns: 800 },
    );
    // The property says something only if the fast path was taken often enough.
    expect(taken).toBeGreaterThan(30);
  });
});
