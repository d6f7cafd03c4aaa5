/**
 * The complete MIME message of an email, with the plain-text part derived from body_html
 * when the caller sent no body_text. Both grow with the body and html-to-text is quadratic
 * in nesting depth, so a large email is built in a worker thread (./worker-pool.ts), within
 * limits that end in a coded error (EmailMimeBuilder.build); a small one, as most
 * notifications are, in the calling thread, where its worst shape is bounded by its size.
 */
import { availableParallelism } from 'node:os';
import { errors, NotifyError } from '../../core/errors.js';
import { HTML_TO_TEXT_OPTIONS, loadHtmlToText, simpleHtmlToText } from './html-to-text.js';
import type { MailParts } from './mail-parts.js';
import { plainMime } from './plain-mime.js';
import { WorkerLostError, WorkerPool, WorkerTimeoutError } from './worker-pool.js';

export type { MailParts } from './mail-parts.js';

type MailReply = { raw: string } | { failed: 'text' | 'mime'; error: string };

/** The message is ours alone: nothing in it may make nodemailer read files or fetch URLs. */
const COMPOSER_FLAGS = { disableFileAccess: true, disableUrlAccess: true } as const;

/**
 * HTML and text together up to this many characters are built in the calling thread: even
 * the worst adversarial shapes of this size (deep nesting, unclosed tags, entity floods)
 * build in tens of milliseconds, where a worker round trip would slow every small send.
 */
export const INLINE_MAX_CHARS = 8 * 1024;

/**
 * A text part with a line that starts as a multipart delimiter does (`--`) is written base64:
 * then no line of caller content on the wire starts like one, whatever a reader makes of
 * boundaries (the boundary itself never occurs in the content: ./boundary.ts). Self-contained:
 * the worker gets its source.
 */
export function asPart(content: string): string | { content: string; headers: Record<string, string> } {
  return /(?:^|[\r\n])--/.test(content) ? { content, headers: { 'Content-Transfer-Encoding': 'base64' } } : content;
}

const WORKER_SOURCE = `
const asPart = ${asPart.toString()};
export default async function setup(workerData) {
  const { compile } = await import(workerData.htmlToTextUrl);
  const { default: MailComposer } = await import(workerData.mailComposerUrl);
  const toText = compile(workerData.htmlToTextOptions);
  const reason = (err) => (err instanceof Error ? err.message : String(err));
  return async (mail) => {
    let text = mail.text;
    if (text === undefined) {
      try {
        text = toText(mail.html);
      } catch (err) {
        return { failed: 'text', error: reason(err) };
      }
    }
    try {
      const composer = new MailComposer({ ...mail, html: asPart(mail.html), text: asPart(text), ...workerData.composerFlags });
      const raw = await composer.compile().build();
      return { raw: raw.toString('utf8') };
    } catch (err) {
      return { failed: 'mime', error: reason(err) };
    }
  };
}
`;

/**
 * The CPU time one email may take to build, at most: far above what real mail needs (a 1 MiB
 * body of tables and links takes well under it), far below what hostile HTML does (html-to-text
 * is quadratic in nesting depth: a 1 MiB body of `<b>` takes minutes).
 */
export const BUILD_CPU_MS = 3_000;

/** Ample: the worst 1 MiB body measured stays under 128 MB. */
const WORKER_HEAP_MB = 512;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function noText(why: string): NotifyError {
  return errors.invalidField(
    `body_html could not be turned into the plain-text part (${why}); nothing was sent. Send body_text with it, or simplify the HTML.`,
    { via: 'email' },
  );
}

function busy(timeoutMs: number): NotifyError {
  const retry = seconds(timeoutMs);
  return errors.rateLimited(
    `The server is busy building other emails; nothing was sent. Retry in ${retry} s, or send body_text with body_html (deriving it takes longest).`,
    { via: 'email', retryAfterS: retry },
  );
}

function slow(timeoutMs: number): NotifyError {
  const retry = seconds(timeoutMs);
  return errors.providerUnavailable(`The server is too busy to build this email in time; nothing was sent. Retry in ${retry} s.`, {
    via: 'email',
    retryAfterS: retry,
  });
}

function mimePool(workers: number): WorkerPool<MailParts, MailReply> {
  return new WorkerPool({
    source: WORKER_SOURCE,
    workerData: {
      htmlToTextUrl: import.meta.resolve('html-to-text'),
      htmlToTextOptions: HTML_TO_TEXT_OPTIONS,
      mailComposerUrl: import.meta.resolve('nodemailer/lib/mail-composer/index.js'),
      composerFlags: COMPOSER_FLAGS,
    },
    size: workers,
    heapMb: WORKER_HEAP_MB,
  });
}

async function buildInline(mail: MailParts): Promise<string> {
  let text = mail.text;
  if (text === undefined) {
    try {
      text = simpleHtmlToText(mail.html) ?? (await loadHtmlToText())(mail.html);
    } catch (err) {
      throw noText(`the converter failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // The common notification is written directly; MailComposer writes the same bytes, slower.
  const plain = plainMime(mail, text);
  if (plain !== undefined) return plain;
  // Loaded on the first email, not at start-up (it is a fair share of cold start).
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
  const raw = await new MailComposer({ ...mail, html: asPart(mail.html), text: asPart(text), ...COMPOSER_FLAGS }).compile().build();
  return raw.toString('utf8');
}

/**
 * The common notification's message (./plain-mime.ts), built in the calling thread without a
 * promise; undefined when `mail` needs buildEmailMime: a body over INLINE_MAX_CHARS, HTML whose
 * text part html-to-text must derive, or anything plainMime leaves to MailComposer.
 */
export function plainEmailMime(mail: MailParts): string | undefined {
  if (mail.html.length + (mail.text?.length ?? 0) > INLINE_MAX_CHARS) return undefined;
  const text = mail.text ?? simpleHtmlToText(mail.html);
  return text === undefined ? undefined : plainMime(mail, text);
}

export class EmailMimeBuilder {
  private readonly deriving: WorkerPool<MailParts, MailReply>;
  private readonly given: WorkerPool<MailParts, MailReply>;

  /**
   * `workers` for each kind of email: with body_text to derive, and with body_text given, so
   * that the second kind (a fraction of a second, at most) never waits behind the first.
   */
  constructor(
    workers: number,
    private readonly cpuMs = BUILD_CPU_MS,
  ) {
    this.deriving = mimePool(workers);
    this.given = mimePool(workers);
  }

  /**
   * The raw RFC 5322 message. A third of `timeoutMs` to wait for a busy worker (RATE_LIMITED
   * past it); once running, at most `cpuMs` (BUILD_CPU_MS unless told; and half of `timeoutMs`) of CPU, judged on
   * the worker thread's own clock (INVALID_FIELD past it, when deriving: the HTML is the
   * trouble), and `timeoutMs` of wall clock as a backstop (PROVIDER_UNAVAILABLE past it, with
   * less CPU used: the machine is busy, and a retry may pass).
   */
  async build(mail: MailParts, { timeoutMs }: { timeoutMs: number }): Promise<string> {
    const deriving = mail.text === undefined;
    if (mail.html.length + (mail.text?.length ?? 0) <= INLINE_MAX_CHARS) return buildInline(mail);
    const limits = { waitMs: timeoutMs / 3, cpuMs: Math.min(this.cpuMs, timeoutMs / 2), wallMs: timeoutMs };
    let reply: MailReply;
    try {
      reply = await (deriving ? this.deriving : this.given).run(mail, limits);
    } catch (err) {
      if (err instanceof WorkerTimeoutError) {
        if (err.limit === 'wait') throw busy(limits.waitMs);
        if (err.limit === 'wall') throw slow(limits.wallMs);
        throw deriving
          ? noText(`it needs more than ${limits.cpuMs} ms of CPU: very large or very deeply nested HTML`)
          : busy(limits.waitMs);
      }
      if (err instanceof WorkerLostError && err.outOfMemory && deriving) throw noText('it needs more memory than the server allows');
      throw err;
    }
    if ('raw' in reply) return reply.raw;
    if (reply.failed === 'text') throw noText(`the converter failed: ${reply.error}`);
    throw new Error(`building the MIME message failed: ${reply.error}`);
  }

  async close(): Promise<void> {
    await Promise.all([this.deriving.close(), this.given.close()]);
  }
}

// One core is left to the event loop.
const shared = new EmailMimeBuilder(Math.min(4, availableParallelism() - 1));

/** The raw message for `mail` (a large one built off the main thread); see EmailMimeBuilder.build. */
export function buildEmailMime(mail: MailParts, opts: { timeoutMs: number }): Promise<string> {
  return shared.build(mail, opts);
}
