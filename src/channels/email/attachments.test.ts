import { describe, expect, it } from 'vitest';
import { validateUnionCall } from '@notify-mcp/union';
import { loadConfig } from '../../config/config.js';
import { notificationDef } from '../send-union.js';
import { attachmentSettings, contradiction, decodeBase64, sniffType } from './attachments.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const PDF = Buffer.from('%PDF-1.7\n%\xe2\xe3\n', 'latin1');
const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');

function issuesFor(attachments: unknown, env: Record<string, string> = {}) {
  const config = loadConfig({ NOTIFY_DATA_DIR: '/tmp/x', ...env });
  const r = validateUnionCall(
    notificationDef(config.channels),
    {},
    { via: 'email', to: 'ops@example.com', subject: 's', body_html: '<p>x</p>', attachments },
  );
  return r.ok ? [] : r.issues;
}

describe('attachment bytes', () => {
  it('sniffs binary types by their magic, and text by content and name', () => {
    expect(sniffType(PNG, 'x')).toBe('image/png');
    expect(sniffType(PDF, 'x.txt')).toBe('application/pdf');
    expect(sniffType(Buffer.from('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n'), 'a.ics')).toBe('text/calendar');
    expect(sniffType(Buffer.from('{"a":1}'), 'a.json')).toBe('application/json');
    expect(sniffType(Buffer.from('a,b\n1,2\n'), 'a.csv')).toBe('text/csv');
    expect(sniffType(Buffer.from('hello'), 'a.bin')).toBe('text/plain');
    expect(sniffType(Buffer.from([0xff, 0xfe, 0x00, 0x01]), 'a.bin')).toBeUndefined();
  });

  it('says when a declared type contradicts the bytes', () => {
    expect(contradiction(PDF, 'image/png')).toBe('the bytes are application/pdf');
    expect(contradiction(Buffer.from('hello'), 'image/png')).toMatch(/do not start as image\/png/);
    expect(contradiction(Buffer.from('not json'), 'application/json')).toBe('the bytes are not JSON');
    expect(contradiction(PNG, 'text/plain')).toBe('the bytes are image/png');
    expect(contradiction(PNG, 'image/png')).toBeUndefined();
  });

  it('decodes base64 with line breaks, and refuses what is not base64', () => {
    expect(decodeBase64('aGVs\r\nbG8=')?.toString()).toBe('hello');
    expect(decodeBase64('not base64!')).toBeUndefined();
    expect(decodeBase64('abc')).toBeUndefined();
  });

  it('reads its caps from the environment and refuses a type that is no media type', () => {
    expect(attachmentSettings({})).toMatchObject({ maxAttachmentBytes: 2 * 1024 * 1024 });
    expect(attachmentSettings({ NOTIFY_EMAIL_ATTACHMENT_TYPES: 'application/pdf, Text/Plain' }).attachmentTypes).toEqual([
      'application/pdf',
      'text/plain',
    ]);
    expect(() => attachmentSettings({ NOTIFY_EMAIL_ATTACHMENT_TYPES: 'pdf' })).toThrow(/NOTIFY_EMAIL_ATTACHMENT_TYPES/);
  });
});

describe('attachments in a send', () => {
  it('takes bytes with or without a type', () => {
    expect(
      issuesFor([
        { filename: 'a.png', content_base64: b64(PNG) },
        { filename: 'r.pdf', content_base64: b64(PDF), content_type: 'application/pdf' },
      ]),
    ).toEqual([]);
  });

  it('refuses a path or a URL in place of the bytes, and says why', () => {
    for (const where of ['/etc/passwd', 'https://example.com/report.pdf', 'file:///tmp/x', './report.pdf', 'C:\\report.pdf']) {
      const [issue] = issuesFor([{ filename: 'a.pdf', content_base64: where }]);
      expect(issue, where).toMatchObject({ code: 'INVALID_FIELD', path: '/attachments/0/content_base64' });
      expect(issue!.message).toMatch(/never reads a file or fetches a URL/);
    }
    // A path given as its own field is no field of an attachment, and the bytes are missing.
    const issues = issuesFor([{ filename: 'a.pdf', path: '/etc/passwd' }]);
    expect(issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/attachments/0/content_base64']));
  });

  it('refuses a declared type the bytes contradict, and a sniffed type not allowed', () => {
    const [lie] = issuesFor([{ filename: 'a.png', content_base64: b64(PDF), content_type: 'image/png' }]);
    expect(lie).toMatchObject({ code: 'INVALID_FIELD', path: '/attachments/0/content_type' });
    expect(lie!.message).toMatch(/says image\/png but the bytes are application\/pdf/);
    const [zip] = issuesFor([{ filename: 'a.zip', content_base64: b64(Buffer.from('PK\x03\x04rest', 'latin1')) }]);
    expect(zip!.message).toMatch(/the bytes are application\/zip.*NOTIFY_EMAIL_ATTACHMENT_TYPES/);
    const [declared] = issuesFor([{ filename: 'a.exe', content_base64: b64('x'), content_type: 'application/x-msdownload' }]);
    expect(declared).toMatchObject({ code: 'INVALID_FIELD', path: '/attachments/0/content_type' });
  });

  it('refuses file names that carry a path, control or direction characters', () => {
    for (const filename of [
      '../etc/passwd',
      'a/b.txt',
      'a\\b.txt',
      'invoice\u202Etxt.exe',
      'a\nb.txt',
      '..',
      'report\u2028.txt',
      'a\u2029b.txt',
    ]) {
      const [issue] = issuesFor([{ filename, content_base64: b64('hi') }]);
      expect(issue, JSON.stringify(filename)).toMatchObject({ code: 'INVALID_FIELD', path: '/attachments/0/filename' });
    }
  });

  it('refuses a name whose extension another type goes by, sniffed or declared, saying which it must end in', () => {
    // e3: each left as text/plain under its name, and the recipient's system opens it by the name.
    for (const filename of [
      'invoice.hta',
      'update.bat',
      'invoice.html',
      'logo.svg',
      'run.ps1',
      'invoice.pdf.hta',
      'invoice.hta.',
      'invoice.hta .',
      'notes',
    ]) {
      const [issue, ...more] = issuesFor([{ filename, content_base64: b64('hello') }]);
      expect(issue, filename).toMatchObject({ code: 'INVALID_FIELD', path: '/attachments/0/filename' });
      expect(issue!.message, filename).toMatch(/a text\/plain file must end in \.txt, \.text, \.log/);
      expect(more).toEqual([]);
    }
    const [declared] = issuesFor([{ filename: 'chart.svg', content_base64: b64(PNG), content_type: 'image/png' }]);
    expect(declared).toMatchObject({
      path: '/attachments/0/filename',
      message: expect.stringMatching(/ends in \.svg.*image\/png file must end in \.png/),
    });
    // Consistent names pass, in any case; a type the operator added goes by nodemailer's table.
    for (const [filename, bytes] of [
      ['Notes.TXT', 'x'],
      ['q3.csv', 'a,b'],
      ['chart.jpeg', Buffer.from('ffd8ffe0', 'hex')],
      ['cal.ics', 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n'],
      ['r.pdf', PDF],
    ] as const) {
      expect(issuesFor([{ filename, content_base64: b64(bytes) }]), filename).toEqual([]);
    }
    const env = { NOTIFY_EMAIL_ATTACHMENT_TYPES: 'application/zip,text/plain' };
    const zip = b64(Buffer.from('PK\x03\x04rest', 'latin1'));
    expect(issuesFor([{ filename: 'a.zip', content_base64: zip }], env)).toEqual([]);
    expect(issuesFor([{ filename: 'a.exe', content_base64: zip }], env)[0]).toMatchObject({
      path: '/attachments/0/filename',
      message: expect.stringMatching(/an extension of application\/zip/),
    });
  });

  it('caps the count and the decoded size in all, naming the variable', () => {
    const many = Array.from({ length: 11 }, (_, i) => ({ filename: `${i}.txt`, content_base64: b64('x') }));
    expect(issuesFor(many)[0]).toMatchObject({ code: 'TOO_LONG', path: '/attachments' });
    const big = [
      { filename: 'a.txt', content_base64: b64('x'.repeat(600)) },
      { filename: 'b.txt', content_base64: b64('y'.repeat(600)) },
    ];
    const [issue] = issuesFor(big, { NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES: '1000' });
    expect(issue).toMatchObject({ code: 'TOO_LONG', path: '/attachments' });
    expect(issue!.message).toMatch(/NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES/);
    expect(issuesFor(big, { NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES: '1200' })).toEqual([]);
  });
});
