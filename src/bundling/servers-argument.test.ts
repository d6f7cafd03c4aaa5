import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from './errors.js';
import { serversFileArgument } from './servers-argument.js';

describe('serversFileArgument', () => {
  it('takes the file as a positional, --servers, or the old --config', () => {
    expect(serversFileArgument({ positionals: ['a.json'] })).toBe('a.json');
    expect(serversFileArgument({ positionals: [], servers: 'b.json' })).toBe('b.json');
    expect(serversFileArgument({ positionals: [], config: 'c.json' })).toBe('c.json');
    // The same file twice is one file.
    expect(serversFileArgument({ positionals: ['a.json'], servers: 'a.json', config: 'a.json' })).toBe('a.json');
  });

  it('refuses none, two different files, or two positionals, saying what to write', () => {
    for (const given of [
      { positionals: [] },
      { positionals: ['a.json'], servers: 'b.json' },
      { positionals: [], servers: 'b.json', config: 'c.json' },
      { positionals: ['a.json', 'b.json'] },
    ]) {
      expect(() => serversFileArgument(given)).toThrow(GatewayConfigError);
      expect(() => serversFileArgument(given)).toThrow(/^Give bundle (its|one) servers file, e\.g\. notify-mcp bundle servers\.json/);
    }
    expect(() => serversFileArgument({ positionals: ['a.json'], servers: 'b.json' })).toThrow(/got a\.json and b\.json$/);
  });
});
