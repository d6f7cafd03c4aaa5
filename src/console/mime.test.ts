import { describe, expect, it } from 'vitest';
import { attachments, decodeWords, htmlBody, parseMime, rawMessage } from './mime.js';

const MESSAGE = [
  'Subject: =?UTF-8?Q?Caf=C3=A9_numbers?=',
  'Content-Type: multipart/mixed; boundary="mix"',
  '',
  '--mix',
  'Content-Type: multipart/alternative; boundary="alt"',
  '',
  '--alt',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'plain',
  '--alt',
  'Content-Type: text/html; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  '<p>caf=C3=A9 =',
  'ok</p>',
  '--alt--',
  '--mix',
  'Content-Type: application/pdf; name=report.pdf',
  'Content-Disposition: attachment; filename="report.pdf"',
  'Content-Transfer-Encoding: base64',
  '',
  'JVBERi0=',
  '--mix--',
  '',
].join('\r\n');

describe('mime', () => {
  it('finds the HTML part, the attachments and the subject of a recorded message', () => {
    expect(rawMessage({ raw: MESSAGE })).toBe(MESSAGE);
    expect(rawMessage({ raw: 'just text' })).toBeUndefined();
    expect(rawMessage({ To: '+1' })).toBeUndefined();
    const m = parseMime(MESSAGE);
    expect(htmlBody(m)).toBe('<p>café ok</p>');
    expect(attachments(m)).toEqual([
      { filename: 'report.pdf', type: 'application/pdf', size: 5, sha256: '38523c087796e5d5dd1cf9bad1fb026781a838dd9dd2cf8af58b9f6502a46778' },
    ]);
    expect(decodeWords(m.headers.get('subject')!)).toBe('Café numbers');
    expect(decodeWords('=?utf-8?B?w6l0w6k=?= plain')).toBe('été plain');
  });
});
