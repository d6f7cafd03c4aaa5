/**
 * Slack through the Web API (chat.postMessage): everything the channel knows. Broadcast
 * mentions are made inert here (./mentions.ts) unless the operator allows them, so the
 * delivery record and a dry run show the text as it is posted.
 */
import { z } from 'zod';
import { flag, loopbackOrigin } from '../../core/env.js';
import { defineChannel } from '../channel.js';
import { slackMatcher } from './allowlist.js';
import { BLOCK_TYPES, blocksField, blocksText, MAX_BLOCKS, neutraliseBlocks } from './blocks.js';
import { neutraliseBroadcasts } from './mentions.js';
import { slackAnswerLine, withSlackAnswer } from './answer-links.js';
import { withSlackButtons } from './answer-buttons.js';
import { readSlackInteraction, SLACK_INTERACTIONS_PATH } from './interactions.js';
import type { SlackPayload } from './web-api.js';

const SLACK_CHANNEL = /^([CGDUW][A-Z0-9]{2,}|#[a-z0-9][a-z0-9._-]{0,79})$/;
const SLACK_TS = /^\d{10}\.\d{6}$/;
const TEXT_MAX = 40_000;

/** What happens to broadcast mentions, for the description. */
function broadcastRule(allowed: boolean): string {
  return allowed
    ? 'Broadcast mentions (<!channel>, <!here>, <!everyone>, user groups) are allowed by the operator and notify everyone they name.'
    : 'Broadcasts (<!channel>, <!here>, @channel, user groups) post inert; mention as <@U…>.';
}

const slackText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export const slack = defineChannel({
  name: 'slack',
  label: 'Slack',
  variables: ['SLACK_BOT_TOKEN', 'SLACK_API_URL', 'NOTIFY_SLACK_ALLOW_BROADCAST', 'SLACK_SIGNING_SECRET'],

  settings(env) {
    const common = {
      apiUrl: loopbackOrigin(env, 'SLACK_API_URL'),
      /** Post broadcast mentions (<!channel>, <!here>, user groups…) as written; otherwise they are made inert. */
      allowBroadcast: flag(env, 'NOTIFY_SLACK_ALLOW_BROADCAST'),
      /** Verifies button clicks (POST /slack/interactions); with it, a question carries buttons, without it links only. */
      signingSecret: env.SLACK_SIGNING_SECRET || undefined,
    };
    const botToken = env.SLACK_BOT_TOKEN || undefined;
    return botToken ? { live: true, botToken, ...common } : { live: false, ...common };
  },

  allowlist: { variable: 'NOTIFY_SLACK_ALLOW', matcher: slackMatcher },

  branch: ({ allowBroadcast }) => ({
    fields: {
      channel: z
        .string()
        .regex(SLACK_CHANNEL)
        .meta({ description: 'conversation or user (DM) ID or #name', examples: ['C0123ABCD'] }),
      text: z.string().min(1).max(TEXT_MAX),
      thread: z
        .string()
        .regex(SLACK_TS)
        .optional()
        .meta({ description: 'parent ts', examples: ['1712345678.123456'] }),
      blocks: blocksField.optional().meta({ description: `Block Kit: ${BLOCK_TYPES.join(', ')}` }),
    },
    description: broadcastRule(allowBroadcast),
    // With blocks, the link is one more section: Slack takes at most MAX_BLOCKS.
    answerCheck: (call: { blocks?: readonly unknown[] | undefined }) =>
      (call.blocks?.length ?? 0) < MAX_BLOCKS
        ? undefined
        : {
            path: ['blocks'],
            message: `Shorten {field}: with ask, the answer link is one more block, so at most ${MAX_BLOCKS - 1} blocks.`,
          },
  }),

  answerRoom: { field: 'text', max: TEXT_MAX, line: slackAnswerLine },

  sentMeans: 'Slack posted the message; that is final (ok:true), no later receipt comes.',

  recipients: (call) => [call.channel],
  // The kind of conversation (C public, G private, D direct message, # a name), not which one.
  recipientClass: (recipient) => `${recipient.slice(0, 1)}…`,

  // Slack reads `<…>` as links and mentions: a client's self-chosen name must not become one.
  notice: (to, n) => ({ via: 'slack', channel: to, text: `${slackText(n.text)} Approve or decline: <${n.link}>` }),
  // Bounded well under TEXT_MAX: the answer link and its line are added to the text.
  forward: (to, m) => ({ via: 'slack', channel: to, text: slackText(m.text).slice(0, 3_000) }),
  editWaiting: (call, change) => ({
    ...call,
    text: change.text,
    ...(change.blocks ? { blocks: change.blocks as { type: string }[] } : {}),
  }),
  // The blocks are what Slack shows (text is the fallback): each text, link and mention in them, on its own line.
  summary: (call) => ({
    headlineLabel: 'First line',
    headline: call.text.split('\n')[0]!,
    body: call.text,
    details: (call.blocks ?? []).flatMap((block, i) =>
      blocksText([block]).map((value) => ({ label: `Block ${i + 1} (${block.type})`, value })),
    ),
  }),

  // A broadcast pages a whole channel: NOTIFY_APPROVAL=broadcast asks a person first. Only when
  // the operator allows broadcasts at all; otherwise they are posted inert and page no one.
  approvalRules: {
    broadcast: (call, settings) =>
      settings.allowBroadcast &&
      (neutraliseBroadcasts(call.text).count > 0 || (call.blocks !== undefined && neutraliseBlocks(call.blocks).count > 0)),
  },

  inbound: {
    path: SLACK_INTERACTIONS_PATH,
    read: (settings, callback, nowMs) => readSlackInteraction(settings, callback, nowMs),
  },

  async buildPayload(call, { settings, answer }) {
    // A broadcast pages a whole channel: that needs the operator's consent, not the caller's.
    const text = settings.allowBroadcast ? call.text : neutraliseBroadcasts(call.text).text;
    const payload: SlackPayload = { channel: call.channel, text };
    if (call.thread) payload.thread_ts = call.thread;
    if (call.blocks) payload.blocks = settings.allowBroadcast ? call.blocks : neutraliseBlocks(call.blocks).blocks;
    if (!answer) return { payload };
    return { payload: settings.signingSecret ? withSlackButtons(payload, answer) : withSlackAnswer(payload, answer) };
  },

  editCall: (posted, change) => ({
    via: 'slack',
    channel: posted.channel,
    text: change.text,
    ...(posted.thread_ts ? { thread: posted.thread_ts } : {}),
    ...(change.blocks ? { blocks: change.blocks as { type: string }[] } : {}),
  }),

  async check(settings, allow, ctx) {
    const { checkSlack } = await import('./check.js');
    return checkSlack(settings, allow, ctx);
  },

  async createProvider(settings, { log, maxConcurrent, requestTimeoutMs }) {
    const { createSlackProvider } = await import('./web-api.js');
    return createSlackProvider({ token: settings.botToken, apiUrl: settings.apiUrl, timeoutMs: requestTimeoutMs, maxConcurrent, log });
  },

  examples: [
    { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished' },
    { via: 'slack', channel: '#ops-alerts', text: 'x'.repeat(40_000), thread: '1712345678.123456', idempotency_key: 'k'.repeat(128) },
    {
      via: 'slack',
      channel: 'U0123ABCD',
      text: 'Deploy finished',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Deploy finished' } },
        { type: 'section', text: { type: 'mrkdwn', text: '*v1.2* is live' } },
        { type: 'divider' },
      ],
    },
  ],
});
