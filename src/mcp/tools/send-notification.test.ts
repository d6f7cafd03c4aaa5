import { describe, expect, it } from 'vitest';
import { defineChannel, type Channel } from '../../channels/channel.js';
import { CHANNELS } from '../../channels/registry.js';
import { loadConfig } from '../../config/config.js';
import { dryRunProvider } from '../../providers/dry-run.js';
import { sendOutputSchema } from './send-notification.js';

/** A minimal channel whose results carry `result`. */
const withResult = (name: string, result: Record<string, { type: string }>): Channel =>
  defineChannel({
    name,
    label: name,
    variables: [],
    settings: () => ({ live: false }),
    allowlist: { variable: `NOTIFY_${name.toUpperCase()}_ALLOW`, matcher: { entryProblem: () => undefined, allows: () => true } },
    branch: () => ({ fields: {}, description: `Sends by ${name}.` }),
    result,
    recipients: () => [],
    buildPayload: async () => ({ payload: {} }),
    createProvider: async () => dryRunProvider,
    sentMeans: 'accepted.',
    examples: [{ via: name }],
  });

const properties = (schema: Record<string, unknown>) => schema.properties as Record<string, { enum?: string[] }>;

describe('sendOutputSchema', () => {
  it("lists every channel as a via, and each channel's result fields with their enums", () => {
    const schema = sendOutputSchema(loadConfig({ NOTIFY_DATA_DIR: '/x' }).channels);
    expect(properties(schema).via!.enum).toEqual(CHANNELS.filter((c) => c.name !== 'webhook').map((c) => c.name));
    expect(properties(schema).encoding).toEqual({ type: 'string', enum: ['GSM-7', 'UCS-2'] });
  });

  it('refuses two channels that declare one result field differently, or one that shadows a common field', () => {
    const config = (...channels: Channel[]) => loadConfig({ NOTIFY_DATA_DIR: '/x' }, channels).channels;
    const segments = (type: string) => ({ segments: { type } });
    expect(() => sendOutputSchema(config(withResult('a', segments('integer')), withResult('b', segments('integer'))))).not.toThrow();
    expect(() => sendOutputSchema(config(withResult('a', segments('integer')), withResult('b', segments('string'))))).toThrow(
      'channel b declares result field "segments"',
    );
    expect(() => sendOutputSchema(config(withResult('a', { via: { type: 'string' } })))).toThrow('channel a declares result field "via"');
  });
});
