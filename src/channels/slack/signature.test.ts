import { describe, expect, it } from 'vitest';
import { slackSignature, slackSignatureProblem } from './signature.js';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const NOW = 1_765_000_000_000;
const BODY = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
const signed = (ts: number, body = BODY, secret = SECRET) => ({
  'x-slack-request-timestamp': String(ts),
  'x-slack-signature': slackSignature(secret, String(ts), body),
});

describe('Slack v0 request signatures', () => {
  it("match Slack's documented example", () => {
    // https://api.slack.com/authentication/verifying-requests-from-slack (the worked example).
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(slackSignature(SECRET, '1531420618', body)).toBe('v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503');
  });

  it('verify a request signed now, or within 5 minutes either way', () => {
    const now = Math.floor(NOW / 1000);
    expect(slackSignatureProblem(SECRET, signed(now), BODY, NOW)).toBeUndefined();
    expect(slackSignatureProblem(SECRET, signed(now - 300), BODY, NOW)).toBeUndefined();
    expect(slackSignatureProblem(SECRET, signed(now + 300), BODY, NOW)).toBeUndefined();
  });

  it('refuse a request older than 5 minutes (a replay), even correctly signed', () => {
    const now = Math.floor(NOW / 1000);
    expect(slackSignatureProblem(SECRET, signed(now - 301), BODY, NOW)).toMatch(/more than 5 minutes/);
    expect(slackSignatureProblem(SECRET, signed(now + 301), BODY, NOW)).toMatch(/more than 5 minutes/);
  });

  it('refuse another secret, a changed body, a missing or malformed header', () => {
    const now = Math.floor(NOW / 1000);
    expect(slackSignatureProblem(SECRET, signed(now, BODY, 'other'), BODY, NOW)).toMatch(/does not verify/);
    expect(slackSignatureProblem(SECRET, signed(now), `${BODY}x`, NOW)).toMatch(/does not verify/);
    expect(slackSignatureProblem(SECRET, { 'x-slack-request-timestamp': String(now) }, BODY, NOW)).toMatch(/no X-Slack-Signature/);
    expect(slackSignatureProblem(SECRET, { ...signed(now), 'x-slack-signature': 'v0=00' }, BODY, NOW)).toMatch(/does not verify/);
    expect(slackSignatureProblem(SECRET, { ...signed(now), 'x-slack-request-timestamp': '1e9' }, BODY, NOW)).toMatch(/not a number/);
    expect(slackSignatureProblem(SECRET, { ...signed(now), 'x-slack-signature': ['a', 'b'] }, BODY, NOW)).toMatch(/no X-Slack/);
  });
});
