/**
 * POST /slack/interactions (the Slack app's Interactivity Request URL): a click on a question's
 * button. The signature and timestamp are checked on the raw body first (./signature.ts);
 * only then is the form's `payload` parsed. The person is answered through the interaction's
 * response_url: the message's buttons are replaced by who answered, or they are told why not.
 */
import type { InboundCallback, InboundReading, ReplyOutcome } from '../inbound.js';
import { ANSWER_BLOCK, BUTTON_VALUE, blocksAnswered } from './answer-buttons.js';
import { slackSignatureProblem } from './signature.js';

export const SLACK_INTERACTIONS_PATH = '/slack/interactions';
/** Slack expects the click answered within 3 s; its response_url post is bounded below that. */
const RESPOND_TIMEOUT_MS = 2000;
const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

interface Interaction {
  type?: unknown;
  user?: { id?: unknown };
  actions?: { action_id?: unknown; value?: unknown }[];
  response_url?: unknown;
  message?: { text?: unknown; blocks?: unknown };
}

/**
 * Where a response may go: Slack's own hooks, or the loopback SLACK_API_URL of a test. The
 * URL arrives signed, but is still a URL this server will post to.
 */
function responseUrlAllowed(url: string, apiUrl: string | undefined): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === 'https:' && parsed.hostname === 'hooks.slack.com' && !parsed.username && !parsed.password) return true;
  return apiUrl !== undefined && parsed.origin === apiUrl;
}

/** What response_url is posted: the answered message in place of the original, or a note to the clicker alone. */
function responseBody(outcome: ReplyOutcome, message: Interaction['message']): Record<string, unknown> {
  if (outcome.kind === 'refused') return { response_type: 'ephemeral', replace_original: false, text: outcome.why };
  const blocks = Array.isArray(message?.blocks) ? blocksAnswered(message.blocks, outcome) : undefined;
  return { replace_original: true, text: typeof message?.text === 'string' ? message.text : '', ...(blocks ? { blocks } : {}) };
}

function parseInteraction(body: string): Interaction | undefined {
  const raw = new URLSearchParams(body).get('payload');
  if (raw === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Interaction) : undefined;
  } catch {
    return undefined;
  }
}

/** A click, read: verified first; `secret` undefined (SLACK_SIGNING_SECRET unset): nothing can be verified. */
export async function readSlackInteraction(
  settings: { signingSecret?: string | undefined; apiUrl?: string | undefined },
  cb: InboundCallback,
  nowMs: number,
): Promise<InboundReading> {
  if (!settings.signingSecret) return { verified: false, why: 'SLACK_SIGNING_SECRET is not set, so no click can be verified' };
  const problem = slackSignatureProblem(settings.signingSecret, cb.headers, cb.body, nowMs);
  if (problem) return { verified: false, why: problem };
  const interaction = parseInteraction(cb.body);
  if (!interaction || interaction.type !== 'block_actions') return { verified: true, reply: null, why: 'not a block_actions payload' };
  const action = interaction.actions?.[0];
  const value = typeof action?.value === 'string' ? BUTTON_VALUE.exec(action.value) : null;
  if (!value || typeof action?.action_id !== 'string' || !action.action_id.startsWith(`${ANSWER_BLOCK}_`))
    return { verified: true, reply: null, why: 'not a click on an answer button' };
  const by = interaction.user?.id;
  if (typeof by !== 'string' || !SLACK_USER.test(by)) return { verified: true, reply: null, why: 'the click names no Slack user' };
  const url = typeof interaction.response_url === 'string' ? interaction.response_url : undefined;
  const respondTo = url !== undefined && responseUrlAllowed(url, settings.apiUrl) ? url : undefined;
  return {
    verified: true,
    reply: {
      kind: 'choice',
      token: value[2]!,
      index: Number(value[1]),
      by,
      async respond(outcome) {
        if (!respondTo) return;
        const res = await fetch(respondTo, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(responseBody(outcome, interaction.message)),
          signal: AbortSignal.timeout(RESPOND_TIMEOUT_MS),
        });
        if (!res.ok) throw new Error(`Slack's response_url answered ${res.status}`);
      },
    },
  };
}
