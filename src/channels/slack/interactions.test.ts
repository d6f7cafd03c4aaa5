import { describe, expect, it } from 'vitest';
import { readSlackInteraction } from './interactions.js';
import { slackSignature } from './signature.js';

const SECRET = 'interactions-test-secret';
const NOW = 1_765_000_000_000;
const TOKEN = 'b'.repeat(43);

function signed(payload: unknown) {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = String(NOW / 1000);
  return { search: '', headers: { 'x-slack-request-timestamp': ts, 'x-slack-signature': slackSignature(SECRET, ts, body) }, body };
}
const click = (extra: Record<string, unknown> = {}) => ({
  type: 'block_actions',
  user: { id: 'U0CLICKER' },
  actions: [{ action_id: 'notify_answer_1', value: `1:${TOKEN}` }],
  ...extra,
});

describe('readSlackInteraction', () => {
  it('reads a click on an answer button: the token, the position, the user', async () => {
    const reading = await readSlackInteraction({ signingSecret: SECRET }, signed(click()), NOW);
    expect(reading).toMatchObject({ verified: true, reply: { kind: 'choice', token: TOKEN, index: 1, by: 'U0CLICKER' } });
  });

  it('verifies nothing without SLACK_SIGNING_SECRET', async () => {
    expect(await readSlackInteraction({}, signed(click()), NOW)).toMatchObject({ verified: false });
  });

  it('acts on nothing but a click on its own buttons', async () => {
    const none = async (payload: unknown) =>
      ((await readSlackInteraction({ signingSecret: SECRET }, signed(payload), NOW)) as { reply: unknown }).reply;
    expect(await none({ type: 'view_submission' })).toBeNull();
    expect(await none(click({ actions: [{ action_id: 'other_button', value: `1:${TOKEN}` }] }))).toBeNull();
    expect(await none(click({ actions: [{ action_id: 'notify_answer_1', value: '1:short' }] }))).toBeNull();
    expect(await none(click({ user: { id: 'not a user' } }))).toBeNull();
    expect(await none('a string')).toBeNull();
  });

  it('posts its answer only to hooks.slack.com or the loopback SLACK_API_URL, never to a URL the payload names elsewhere', async () => {
    // Nothing listens on port 9: were it posted to, fetch would throw.
    const elsewhere = await readSlackInteraction({ signingSecret: SECRET }, signed(click({ response_url: 'http://127.0.0.1:9/x' })), NOW);
    const reply = (elsewhere as { reply: { respond(o: unknown): Promise<void> } }).reply;
    await expect(reply.respond({ kind: 'refused', why: 'x' })).resolves.toBeUndefined();
    const allowed = await readSlackInteraction(
      { signingSecret: SECRET, apiUrl: 'http://127.0.0.1:9' },
      signed(click({ response_url: 'http://127.0.0.1:9/x' })),
      NOW,
    );
    await expect(
      (allowed as { reply: { respond(o: unknown): Promise<void> } }).reply.respond({ kind: 'refused', why: 'x' }),
    ).rejects.toThrow();
  });
});
