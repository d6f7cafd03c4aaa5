import { describe, expect, it } from 'vitest';
import { email } from './index.js';

const settings = email.settings({});
const ID = 'ntf_0123456789abcdef0123456789abcdef';
const AT = Date.UTC(2026, 11, 6, 5, 0, 0);
const build = async (call: Record<string, unknown>, id = ID, at = AT) =>
  (
    await email.buildPayload({ via: 'email', to: 'alice@example.com', subject: 'Q3 report', ...call } as never, {
      id,
      settings,
      timeoutMs: 10_000,
      at,
    })
  ).payload.raw;

/** Each multipart's boundary, and its leaves' types, read as RFC 2046 says: a delimiter is a whole line. */
function leaves(raw: string): string[] {
  const text = raw.replace(/\r\n/g, '\n');
  const at = text.indexOf('\n\n');
  const head = text.slice(0, at).replace(/\n[ \t]+/g, ' ');
  const body = text.slice(at + 2);
  const type = /^content-type:\s*([^;\n]+)/im.exec(head)?.[1]?.trim().toLowerCase() ?? 'text/plain';
  if (!type.startsWith('multipart/')) return [type];
  const boundary = /boundary="?([^";\n]+)"?/i.exec(head)![1]!;
  const out: string[] = [];
  let part: string[] | undefined;
  for (const line of body.split('\n')) {
    if (line === `--${boundary}` || line === `--${boundary}--`) {
      if (part) out.push(...leaves(part.join('\n')));
      part = line.endsWith('--') && line !== `--${boundary}` ? undefined : [];
      if (part === undefined) break;
    } else part?.push(line);
  }
  return out;
}

/** The parts a caller who knows `boundary` would add to the HTML: a second HTML and an .exe. */
function injected(boundary: string): string {
  return [
    '<p>Quarterly report attached.</p>',
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>URGENT: wire the money today.</p>',
    `--${boundary}`,
    'Content-Type: application/x-msdownload; name=invoice.exe',
    'Content-Disposition: attachment; filename=invoice.exe',
    'Content-Transfer-Encoding: base64',
    '',
    'TVqQAA==',
    `--${boundary}--`,
    '<!-- -->',
  ].join('\n');
}

const boundaryOf = (raw: string) => /boundary="([^"]+)"/.exec(raw)![1]!;

describe("email channel: the MIME structure is the server's alone", () => {
  const kinds = [
    // The common notification, written by plainMime.
    ['written directly', { body_text: 'Quarterly report attached.' }],
    // MailComposer's path: an attachment makes it multipart/mixed.
    [
      'by MailComposer',
      {
        body_text: 'Quarterly report attached.',
        attachments: [{ filename: 'q3.csv', content_base64: Buffer.from('a,b\n1,2\n').toString('base64') }],
      },
    ],
  ] as const;

  it.each(kinds)('a body holding the delimiter the id would give adds no part (%s)', async (_, extra) => {
    const idBoundary = `--_NmP-${ID.replace(/^ntf_/, '')}-Part_1`;
    const raw = await build({ ...extra, body_html: injected(idBoundary) });
    expect(leaves(raw).filter((t) => t === 'application/x-msdownload' || t === 'text/html')).toEqual(['text/html']);
    expect(boundaryOf(raw)).not.toContain(ID.slice(4));
  });

  it.each(kinds)('a body holding the boundary the same call had before an edit adds no part (%s)', async (_, extra) => {
    const before = boundaryOf(await build({ ...extra, body_html: '<p>Quarterly report attached.</p>' }));
    const raw = await build({ ...extra, body_html: injected(before) });
    expect(leaves(raw)).not.toContain('application/x-msdownload');
    expect(boundaryOf(raw)).not.toBe(before);
    expect(
      raw
        .split(/\r?\n/)
        .filter((l) => l.includes(boundaryOf(raw)) && !l.includes('boundary='))
        .every((l) => /^--.*(--)?$/.test(l)),
    ).toBe(true);
  });

  it.each(kinds)(
    'writes a text part holding a line that starts as a delimiter does in base64, so no content line starts like one (%s)',
    async (_, extra) => {
      const raw = await build({ ...extra, body_html: injected('anything'), body_text: 'fine\n-- \nsignature' });
      const base = /--_NmP-([0-9a-f]{32})-Part_1/.exec(raw)![1]!;
      expect(
        raw
          .split(/\r?\n/)
          .filter((l) => l.startsWith('--'))
          .every((l) => l.startsWith(`----_NmP-${base}-Part_`)),
      ).toBe(true);
      expect(raw.match(/Content-Transfer-Encoding: base64/g)!.length).toBeGreaterThanOrEqual(2);
      expect(leaves(raw).slice(0, 2)).toEqual(['text/plain', 'text/html']);
    },
  );

  it.each(kinds)(
    'builds the same bytes from the same call, id and time (an approval in ask mode rebuilds them), and others from another id (%s)',
    async (_, extra) => {
      const call = { ...extra, body_html: '<p>Deployed v1.2</p>' };
      expect(await build(call)).toBe(await build(call));
      expect(boundaryOf(await build(call, 'ntf_fedcba9876543210fedcba9876543210'))).not.toBe(boundaryOf(await build(call)));
    },
  );
});
