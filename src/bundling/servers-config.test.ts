import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayConfigError, loadServersConfig, parseServersConfig } from './index.js';

describe('parseServersConfig (the mcpServers format)', () => {
  it('reads stdio and url servers, in id order, skipping disabled ones', () => {
    const specs = parseServersConfig(
      JSON.stringify({
        mcpServers: {
          memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { A: '1' }, autoApprove: [] },
          remote: { url: 'http://127.0.0.1:3001/mcp', label: 'Remote' },
          off: { command: 'x', disabled: true },
        },
      }),
    );
    expect([...specs.keys()]).toEqual(['memory', 'remote']);
    expect(specs.get('memory')).toEqual({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { A: '1' } });
    expect(specs.get('remote')).toEqual({ url: 'http://127.0.0.1:3001/mcp', headers: {}, label: 'Remote' });
  });

  it('says what is wrong and what the format is', () => {
    expect(() => parseServersConfig('{')).toThrow(GatewayConfigError);
    expect(() => parseServersConfig('{"servers":{}}')).toThrow(/mcpServers/);
    expect(() => parseServersConfig('{"mcpServers":{"a":{"args":[]}}}')).toThrow(/mcpServers\.a/);
    expect(() => parseServersConfig('{"mcpServers":{"a":{"url":"ftp://x"}}}')).toThrow(GatewayConfigError);
    expect(() => parseServersConfig('{"mcpServers":{}}')).toThrow(/no enabled server/);
  });

  it("reads a per-server timeoutMs, names the field when it is wrong, and leaves other clients' `timeout` alone", () => {
    const specs = parseServersConfig(
      JSON.stringify({
        mcpServers: {
          local: { command: 'x', timeoutMs: 120_000, timeout: 30 },
          remote: { url: 'http://127.0.0.1:3001/mcp', timeoutMs: 5000 },
        },
      }),
    );
    expect(specs.get('local')).toEqual({ command: 'x', args: [], env: {}, timeoutMs: 120_000 });
    expect(specs.get('remote')).toMatchObject({ timeoutMs: 5000 });
    for (const [spec, why] of [
      [{ command: 'x', timeoutMs: 0 }, /mcpServers\.a\.timeoutMs: Too small/],
      [{ url: 'http://127.0.0.1/mcp', timeoutMs: '5s' }, /mcpServers\.a\.timeoutMs: .*expected number/],
      [{ url: 'http://127.0.0.1/mcp', timeoutMs: 1.5 }, /mcpServers\.a\.timeoutMs: .*expected int/],
      [{ command: 'x', timeoutMs: 2 ** 31 }, /mcpServers\.a\.timeoutMs: Too big/],
    ] as const) {
      expect(() => parseServersConfig(JSON.stringify({ mcpServers: { a: spec } }))).toThrow(why);
    }
  });

  it('refuses a server id over 64 characters, naming it clipped: ids are in every log line and error', () => {
    expect(() => parseServersConfig(JSON.stringify({ mcpServers: { ['x'.repeat(64)]: { command: 'a' } } }))).not.toThrow();
    const long = JSON.stringify({ mcpServers: { ['x'.repeat(1_000_000)]: { command: 'a' }, ok: { command: 'b' } } });
    expect(() => parseServersConfig(long)).toThrow(/mcpServers\.x{64}… \(1000000 characters\): a server id is at most 64 characters$/);
  });

  it('bounds what it reads and what its errors repeat: no device, no file over 1 MiB, at most 20 problems, ids clipped', async () => {
    // /dev/zero was read without end (500 MB in 8 s); 60,000 bad servers made a 2 MB error.
    await expect(loadServersConfig('/dev/zero')).rejects.toThrow(/cannot read servers config \/dev\/zero: not a regular file/);
    // A FIFO with no writer is refused at once, not waited on.
    const fifo = join(mkdtempSync(join(tmpdir(), 'notify-fifo-')), 'servers.json');
    execFileSync('mkfifo', [fifo]);
    await expect(loadServersConfig(fifo)).rejects.toThrow(/not a regular file/);
    const many = JSON.stringify({ mcpServers: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`s${i}`, { command: 5 }])) });
    const manyError = (() => {
      try {
        parseServersConfig(many);
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    expect(manyError).toMatch(/; and 59980 more$/);
    expect(manyError.length).toBeLessThan(3_000);
    const longKey = 'K'.repeat(1_000_000);
    expect(() => parseServersConfig(JSON.stringify({ mcpServers: { a: { command: 'x', env: { [longKey]: 5 } } } }))).toThrow(
      /mcpServers\.a\.env\.K{64}… \(1000000 characters\): /,
    );
  });
});
