/**
 * `notify-mcp doctor` for live Slack, with the official WebClient: auth.test (the token
 * works, and whose it is), then for each allowlisted channel ID whether the bot is a member
 * (conversations.info → is_member), since a post to a channel it is not in fails. Reads only.
 */
import type { Allowlist } from '../../policy/allowlist.js';
import { fail, pass, type Check, type CheckContext } from '../../core/check.js';

export interface SlackCheckSettings {
  botToken: string;
  apiUrl?: string | undefined;
}

const TOKEN_FIX = "set SLACK_BOT_TOKEN to the app's Bot User OAuth Token (xoxb-…, api.slack.com/apps › OAuth & Permissions)";

/** A Web API failure in words with the fix. */
function failure(name: string, err: unknown, fixFor: (code: string) => string): Check {
  const e = err as { code?: string; data?: { error?: string }; message?: string };
  const code = e.data?.error;
  if (code) return fail(name, `Slack answered ${code}`, fixFor(code));
  return fail(
    name,
    `Slack could not be reached: ${e.message ?? String(err)}`,
    'check this machine reaches slack.com over HTTPS (proxy, firewall, DNS)',
  );
}

export async function checkSlack(settings: SlackCheckSettings, allow: Allowlist | undefined, ctx: CheckContext): Promise<Check[]> {
  const { WebClient, LogLevel } = await import('@slack/web-api');
  const client = new WebClient(settings.botToken, {
    ...(settings.apiUrl ? { slackApiUrl: `${settings.apiUrl}/` } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: ctx.timeoutMs,
    logLevel: LogLevel.ERROR,
  });

  let bot: string;
  try {
    const auth = await client.auth.test();
    bot = auth.user ?? auth.user_id ?? 'the bot';
    const checks = [pass('slack auth', `token of ${bot} in ${auth.team ?? auth.team_id ?? 'its workspace'} accepted`)];
    return [...checks, ...(await membership(client, allow, bot))];
  } catch (err) {
    return [
      failure('slack auth', err, (code) =>
        code === 'invalid_auth' || code === 'not_authed' || code === 'account_inactive' || code === 'token_revoked'
          ? TOKEN_FIX
          : `see https://api.slack.com/methods/auth.test for ${code}`,
      ),
    ];
  }
}

type Client = InstanceType<typeof import('@slack/web-api')['WebClient']>;

async function membership(client: Client, allow: Allowlist | undefined, bot: string): Promise<Check[]> {
  if (!allow || allow.any)
    return [
      pass('slack channels', 'NOTIFY_SLACK_ALLOW allows any channel (*): membership is checked per channel only when they are listed'),
    ];
  const checks: Check[] = [];
  for (const entry of allow.entries) {
    const name = `slack channel ${entry}`;
    if (entry.startsWith('#')) {
      checks.push(pass(name, 'a #name: not looked up (list its channel ID to have membership checked)'));
      continue;
    }
    try {
      const info = await client.conversations.info({ channel: entry });
      const ch = info.channel as { name?: string; is_member?: boolean; is_im?: boolean } | undefined;
      const label = ch?.name ? ` (#${ch.name})` : '';
      if (ch?.is_im || ch?.is_member) checks.push(pass(name, `${bot} is a member${label}`));
      else
        checks.push(
          fail(name, `${bot} is not a member${label}: posts there fail with not_in_channel`, `invite it: /invite @${bot} in that channel`),
        );
    } catch (err) {
      checks.push(
        failure(name, err, (code) =>
          code === 'channel_not_found'
            ? `check the ID in NOTIFY_SLACK_ALLOW; for a private channel, invite @${bot} first (it cannot see the channel until then)`
            : code === 'missing_scope'
              ? 'add the channels:read and groups:read scopes to the app, then reinstall it'
              : `see https://api.slack.com/methods/conversations.info for ${code}`,
        ),
      );
    }
  }
  return checks;
}
