/**
 * NOTIFY_APPROVAL_NOTIFY: a send held for the console posts a notice, through one of this
 * server's own channels, linking to its console page. The notice says only what a person
 * needs to find the send (id, client, channel, recipient classes): never the body or an
 * address, since the approvers' channel may be wider than the send's audience.
 */
import { NotifyError } from '../core/errors.js';
import type { PipelineDeps } from './pipeline.js';
import { sendNotification } from './pipeline.js';

/** The channels a notice can go through, and the field its target fills. */
export const NOTICE_CHANNELS = ['slack', 'email'] as const;
export type NoticeChannel = (typeof NOTICE_CHANNELS)[number];

export interface NoticeTarget {
  via: NoticeChannel;
  /** A Slack channel (ID or #name), or an email address. */
  to: string;
  /** The console's public base URL (NOTIFY_PUBLIC_URL), without a trailing slash. */
  baseUrl: string;
}

/** What the notice tells of the held send. */
export interface HeldNotice {
  id: string;
  via: string;
  client: string | null;
  recipientClasses: readonly string[];
}

/** The client name the notice's own delivery record carries. */
export const NOTICE_CLIENT = 'notify-mcp';

export const consoleLink = (baseUrl: string, id: string): string => `${baseUrl}/console/notifications/${encodeURIComponent(id)}`;

/** Slack reads `<…>` as links and mentions (`<!channel>`): a client's self-chosen name must not become one. */
const slackEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const htmlEscape = (s: string): string => slackEscape(s).replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** The send call of the notice for `held`, as the notice channel's branch takes it. */
export function noticeCall(target: NoticeTarget, held: HeldNotice): Record<string, unknown> {
  const link = consoleLink(target.baseUrl, held.id);
  const client = held.client ?? '(no client name)';
  const to = held.recipientClasses.join(', ') || held.via;
  if (target.via === 'slack') {
    const e = slackEscape;
    return { via: 'slack', channel: target.to, text: `Approval needed: ${e(held.via)} send ${e(held.id)} from ${e(client)}, to ${e(to)}. Approve or decline: <${link}>` };
  }
  const e = htmlEscape;
  return {
    via: 'email',
    to: target.to,
    subject: `Approval needed: ${held.via} send ${held.id}`,
    body_html: `<p>Approval needed: ${e(held.via)} send ${e(held.id)} from ${e(client)}, to ${e(to)}.</p><p>Approve or decline: <a href="${e(link)}">${e(link)}</a></p>`,
  };
}

/**
 * The hook the pipeline calls when it holds a send (PipelineDeps.onHeld). The notice is sent
 * with no approval rules and no quiet hours, so it is never held or scheduled itself (no
 * loop, no notice of a notice); its channel's dry-run, allowlist and rate limits still apply.
 * It never reaches the held send's caller: a failure is one log line.
 */
export function approvalNotifier(deps: PipelineDeps, target: NoticeTarget): (held: HeldNotice) => Promise<void> {
  const config = { ...deps.config, approval: { rules: [] }, time: deps.config.time && { ...deps.config.time, quietHours: [] } };
  const noticeDeps: PipelineDeps = { ...deps, config, onHeld: undefined };
  return async (held) => {
    try {
      const result = await sendNotification(noticeDeps, target.via, noticeCall(target, held), { client: NOTICE_CLIENT, tool: 'approval_notice' });
      deps.log.info('approval notice sent', { notificationId: held.id, via: target.via, notice: result.id, status: result.status });
    } catch (err) {
      const code = err instanceof NotifyError ? err.code : 'INTERNAL';
      deps.log.warn('approval notice failed', { notificationId: held.id, via: target.via, code, reason: (err as Error).message });
    }
  };
}
