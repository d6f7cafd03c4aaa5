import { describe, expect, it } from 'vitest';
import { attachments, decodeWords, htmlBody, parseMime, partsOf, rawMessage } from './mime.js';

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
      {
        filename: 'report.pdf',
        type: 'application/pdf',
        size: 5,
        sha256: '38523c087796e5d5dd1cf9bad1fb026781a838dd9dd2cf8af58b9f6502a46778',
      },
    ]);
    expect(decodeWords(m.headers.get('subject')!)).toBe('Café numbers');
    expect(decodeWords('=?utf-8?B?w6l0w6k=?= plain')).toBe('été plain');
  });
});

describe("mime: the structure a recipient's client reads", () => {
  // A delimiter mid-line (inside an HTML comment) is content; the caller's parts after it are
  // parts all the same for a mail client, so the console must list them.
  const hidden = [
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'plain',
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>benign</p><!-- x--b--',
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>URGENT: wire the money</p>',
    '--b',
    'Content-Type: application/x-msdownload; name=invoice.exe',
    'Content-Disposition: attachment; filename=invoice.exe',
    'Content-Transfer-Encoding: base64',
    '',
    'TVqQAA==',
    '--b--',
    '-->',
  ].join('\r\n');

  it('takes a delimiter only as a line of its own, so it lists every part a client shows', () => {
    const m = parseMime(hidden);
    expect(partsOf(m).map((p) => [p.type, p.filename ?? null, p.size])).toEqual([
      ['text/plain', null, 5],
      ['text/html', null, 24],
      ['text/html', null, 29],
      ['application/x-msdownload', 'invoice.exe', 4],
    ]);
    expect(htmlBody(m)).toBe('<p>benign</p><!-- x--b--');
    expect(attachments(m).map((a) => a.filename)).toEqual(['invoice.exe']);
    // Followed by anything but spaces, it is content too.
    expect(partsOf(parseMime('Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--bx\r\n\r\ny\r\n--b--\r\n'))).toHaveLength(
      1,
    );
  });

  it('decodes RFC 2231 and RFC 2047 file names for display', () => {
    const named = (disposition: string) =>
      partsOf(
        parseMime(
          `Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\nContent-Disposition: ${disposition}\r\n\r\nx\r\n--b--\r\n`,
        ),
      )[0]!.filename;
    expect(named(`attachment; filename*0*=utf-8''report%22%3B%20filename%3D%22; filename*1*=payload.exe`)).toBe(
      'report"; filename="payload.exe',
    );
    expect(named(`attachment; filename*=UTF-8''caf%C3%A9.txt`)).toBe('café.txt');
    expect(named('attachment; filename="=?UTF-8?Q?report=22=3B_filename=3D=22payload=2Eexe?="')).toBe('report"; filename="payload.exe');
    expect(named('attachment; filename="a \\"quoted\\"; name.txt"')).toBe('a "quoted"; name.txt');
  });

  it("works out a base64 attachment's size without decoding it", () => {
    const b64 = Buffer.alloc(1000, 7).toString('base64').replace(/.{76}/g, '$&\r\n');
    const m = parseMime(
      `Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=a.txt\r\nContent-Transfer-Encoding: base64\r\n\r\n${b64}\r\n--b--\r\n`,
    );
    expect(partsOf(m)[0]!.size).toBe(1000);
    expect(attachments(m)[0]!.size).toBe(1000);
  });
});
