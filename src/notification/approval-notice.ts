/**
 * NOTIFY_APPROVAL_NOTIFY: a send held for the console posts a notice, through one of this
 * server's own channels (one whose module builds notices), linking to its console page. The
 * notice says only what a person needs to find the send (id, client, channel, recipient
 * classes): never the body or an address, since the approvers' channel may be wider than the
 * send's audience.
 */
import type { Channel, Notice } from '../channels/channel.js';
import { NotifyError } from '../core/errors.js';
import type { PipelineDeps } from './pipeline.js';
import { sendNotification } from './pipeline.js';

export interface NoticeTarget {
  /** The channel the notice goes through. */
  via: string;
  /** Its recipient, as that channel's notice takes it (a Slack channel, an email address). */
  to: string;
  /** The console's public base URL (NOTIFY_PUBLIC_URL), without a trailing slash. */
  baseUrl: string;
}

/** What the notice tells of the send that awaits approval. */
export interface AwaitingNotice {
  id: string;
  via: string;
  client: string | null;
  recipientClasses: readonly string[];
}

/** The client name the notice's own delivery record carries. */
export const NOTICE_CLIENT = 'notify-mcp';

export const consoleLink = (baseUrl: string, id: string): string => `${baseUrl}/console/notifications/${encodeURIComponent(id)}`;

/** The most of a caller's name a notice quotes; the console shows it whole. */
const NAME_CHARS = 64;

/**
 * Text a caller chose (a self-reported client name, a recipient's domain), made inert for the
 * approvers' channel: one line (controls, line and paragraph separators and bidi controls
 * become spaces; double quotes single ones, so the quotes around it hold), no link a client
 * would make of it (`https://a.b/c` reads `https[:]//a[.]b/c`, an address `a[@]b[.]c`), no
 * mrkdwn emphasis or code (`*_~\``, but `_` inside a word, become look-alikes), and at most
 * NAME_CHARS characters. Each channel's notice escapes its own syntax (`<`, `>`, `&`) after.
 */
export function inertText(text: string, max = NAME_CHARS): string {
  const line = text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/"/g, "'")
    .replace(/:(?=\/\/)/g, '[:]')
    .replace(/(?<=[\p{L}\p{N}])[.@](?=[\p{L}\p{N}])/gu, (c) => `[${c}]`)
    .replace(/[*~`]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, (c) => EMPHASIS[c]!);
  const chars = [...line];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : line;
}
const EMPHASIS: Record<string, string> = { '*': '\u2217', _: '\uff3f', '~': '\u223c', '`': '\u02cb' };

export function noticeOf(baseUrl: string, held: AwaitingNotice): Notice {
  const to = held.recipientClasses.map((c) => inertText(c)).join(', ') || held.via;
  const from = held.client === null ? '(no client name)' : `"${inertText(held.client)}"`;
  return {
    subject: `Approval needed: ${held.via} send ${held.id}`,
    text: `Approval needed: ${held.via} send ${held.id} from ${from}, to ${to}.`,
    link: consoleLink(baseUrl, held.id),
  };
}

/** The send call of the notice for `held`, as the channel's branch takes it; undefined when the channel builds no notices. */
export function noticeCall(
  channel: Pick<Channel, 'notice'>,
  target: NoticeTarget,
  held: AwaitingNotice,
): Readonly<Record<string, unknown>> | undefined {
  return channel.notice?.(target.to, noticeOf(target.baseUrl, held));
}

/**
 * The hook the pipeline calls when a send awaits approval (PipelineDeps.onAwaitingApproval).
 * The notice is sent with no approval rules and no quiet hours, so it is never held or scheduled itself (no
 * loop, no notice of a notice); its channel's dry-run, allowlist and rate limits still apply.
 * It never reaches the held send's caller: a failure is one log line.
 */
export function approvalNotifier(
  deps: PipelineDeps,
  target: NoticeTarget,
  channel: Pick<Channel, 'notice'>,
): (held: AwaitingNotice) => Promise<void> {
  const config = { ...deps.config, approval: { rules: [] }, time: deps.config.time && { ...deps.config.time, quietHours: [] } };
  const noticeDeps: PipelineDeps = { ...deps, config, onAwaitingApproval: undefined };
  return async (held) => {
    try {
      const call = noticeCall(channel, target, held);
      // Config refuses a channel without notices at start; this is a bug if it happens.
      if (!call) throw new Error(`channel "${target.via}" builds no notices`);
      const result = await sendNotification(noticeDeps, target.via, call, { client: NOTICE_CLIENT, tool: 'approval_notice' });
      deps.log.info('approval notice sent', { notificationId: held.id, via: target.via, notice: result.id, status: result.status });
    } catch (err) {
      const code = err instanceof NotifyError ? err.code : 'INTERNAL';
      deps.log.warn('approval notice failed', { notificationId: held.id, via: target.via, code, reason: (err as Error).message });
    }
  };
}
