import { describe, expect, it } from 'vitest';
import { headStrings } from './json-head.js';

describe('headStrings', () => {
  const payload = {
    envelope: { from: 'a@x', to: ['"q\\"uote" <b@y>', '{[', ']}'] },
    messageId: '<m@x>',
    raw: 'Subject: caf\u00e9 "x"\r\n\u0001\r\n\r\nbody',
    n: 1,
    t: true,
  };
  const text = JSON.stringify(payload);

  it('reads every top-level string of a whole object, skipping objects, arrays and literals', () => {
    expect(headStrings(text)).toEqual({ messageId: '<m@x>', raw: payload.raw });
  });

  it('reads a string cut anywhere as far as it goes, an escape cut inside it dropped', () => {
    for (let n = 0; n <= text.length; n++) {
      const got = headStrings(text.slice(0, n));
      if (got.raw !== undefined) expect(payload.raw.startsWith(got.raw), `${n}: ${JSON.stringify(got.raw)}`).toBe(true);
      if (got.messageId !== undefined) expect('<m@x>'.startsWith(got.messageId)).toBe(true);
    }
  });
});
