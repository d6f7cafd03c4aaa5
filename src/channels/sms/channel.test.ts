import { describe, expect, it } from 'vitest';
import { sms } from './index.js';

describe('sms channel: what a person approving a message reads', () => {
  it('names every media URL, which Twilio fetches and sends', () => {
    const call = {
      via: 'sms' as const,
      to: '+14155550123',
      body: 'Your invoice',
      media_urls: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.png'],
    };
    expect(sms.summary!(call).details).toEqual([
      { label: 'Media 1', value: 'https://cdn.example.com/a.png' },
      { label: 'Media 2', value: 'https://cdn.example.com/b.png' },
    ]);
    expect(sms.summary!({ via: 'sms', to: '+14155550123', body: 'x' }).details).toEqual([]);
  });
});
