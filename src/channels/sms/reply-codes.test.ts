import { describe, expect, it } from 'vitest';
import { ACKNOWLEDGE } from '../ask.js';
import { sms } from './index.js';
import { replyCode, replyCodesLine, replyCodesProblem } from './reply-codes.js';

const ENV = { NOTIFY_DATA_DIR: '/x', NOTIFY_PUBLIC_URL: 'https://notify.example.com', NOTIFY_SMS_ALLOW: '*' };

describe('SMS reply codes', () => {
  it('end the text, one per choice; an acknowledgement has one', () => {
    expect(replyCodesLine(['Yes', 'No', 'Later'])).toBe('\n\nReply 1 for Yes, 2 for No, 3 for Later');
    expect(replyCodesLine([ACKNOWLEDGE])).toBe('\n\nReply 1 to acknowledge');
  });

  it('read a lone digit, with spaces or a full stop; anything else is not a code', () => {
    expect(['1', ' 2 ', '3.', '\n4\n'].map(replyCode)).toEqual([1, 2, 3, 4]);
    expect(['0', '12', 'yes', '1 please', '', '１'].map(replyCode)).toEqual([null, null, null, null, null, null]);
  });

  it('count in the segments: a body that fits alone but not with them is refused, saying what they take', () => {
    const line = replyCodesLine(['Yes', 'No']);
    expect(replyCodesProblem('a'.repeat(160 - line.length), ['Yes', 'No'], 1)).toBeUndefined();
    const problem = replyCodesProblem('a'.repeat(150), ['Yes', 'No'], 1)!;
    expect(problem).toBe(
      `Shorten body: with ask, the reply codes at its end ("Reply 1 for Yes, 2 for No", after a blank line) take ${line.length} of the 160 GSM-7 characters 1 segment allows, so body may have ${160 - line.length}, and it has 150.`,
    );
    // A choice outside GSM-7 makes the whole message UCS-2.
    expect(replyCodesProblem('a'.repeat(60), ['Oui ✓', 'Non'], 1)).toMatch(/UCS-2 characters 1 segment allows/);
  });

  it('are checked at the call, on the branch: TOO_LONG on body, nothing sent', () => {
    const branch = sms.configure(ENV).branch;
    const call = { via: 'sms', to: '+14155550123', body: 'a'.repeat(150) };
    expect(branch.safeParse(call).success).toBe(true);
    const refused = branch.safeParse({ ...call, ask: { choices: ['Yes', 'No'] } });
    expect(refused.success).toBe(false);
    expect(refused.error!.issues).toMatchObject([{ path: ['body'], params: { code: 'TOO_LONG' } }]);
    expect(refused.error!.issues[0]!.message).toMatch(/reply codes .* take 27 of the 160/);
    expect(branch.safeParse({ ...call, body: 'a'.repeat(133), ask: { choices: ['Yes', 'No'] } }).success).toBe(true);
  });

  it('go into the payload and its segment count, and no link does', async () => {
    const settings = sms.settings(ENV);
    const call = { via: 'sms' as const, to: '+14155550123', body: 'Deploy?' };
    const answer = { choices: ['Yes', 'No'], url: 'https://notify.example.com/answer/' + 'x'.repeat(43) };
    const built = await sms.buildPayload(call, { id: 'ntf_1', settings, timeoutMs: 1000, answer });
    expect(built.payload.Body).toBe('Deploy?\n\nReply 1 for Yes, 2 for No');
    expect(built.payload.Body).not.toContain('http');
    const again = await sms.buildPayload(call, { id: 'ntf_1', settings, timeoutMs: 1000, answer });
    expect(again).toEqual(built);
  });
});
