/**
 * Just enough MIME parsing to assert what an SMTP peer received: unfolded headers, and the
 * parts of a multipart body with their transfer encoding undone. Not a general parser.
 */

export interface MimeEntity {
  /** Header names lower-cased; values unfolded, in order of appearance. */
  headers: Map<string, string[]>;
  header(name: string): string | undefined;
  /** The body, transfer-decoded, for a leaf part; the raw body for a multipart. */
  body: string;
  /** The media type, lower-cased, without parameters (`text/plain`). */
  type: string;
  parts: MimeEntity[];
}

function splitHead(raw: string): { head: string; body: string } {
  const text = raw.replace(/\r\n/g, '\n');
  const at = text.indexOf('\n\n');
  return at < 0 ? { head: text, body: '' } : { head: text.slice(0, at), body: text.slice(at + 2) };
}

function parseHeaders(head: string): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return headers;
}

function param(value: string, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}="?([^";]+)"?`, 'i').exec(value);
  return m?.[1];
}

function decode(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'quoted-printable':
      return Buffer.from(
        body.replace(/=\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      ).toString('utf8');
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

export function parseMime(raw: string): MimeEntity {
  const { head, body } = splitHead(raw);
  const headers = parseHeaders(head);
  const header = (name: string) => headers.get(name.toLowerCase())?.[0];
  const contentType = header('content-type') ?? 'text/plain';
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  let parts: MimeEntity[] = [];
  let decoded = body;
  if (type.startsWith('multipart/')) {
    const boundary = param(contentType, 'boundary');
    if (!boundary) throw new Error(`multipart without a boundary: ${contentType}`);
    const sections = body.split(`--${boundary}`);
    // sections[0] is the preamble; the last one starts with `--` (the closing delimiter).
    parts = sections
      .slice(1)
      .filter((s) => !s.startsWith('--'))
      .map((s) => parseMime(s.replace(/^\n/, '').replace(/\n$/, '')));
  } else {
    decoded = decode(body, header('content-transfer-encoding'));
  }
  return { headers, header, body: decoded, type, parts };
}
