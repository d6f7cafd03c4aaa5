/**
 * The webhook channel through the built CLI (`npm run build` first): a start with a standard
 * target whose secret is not whsec_-shaped is refused with the variable named, and one
 * 2026-07-28 tools/call over stdio posts a signed request that the local receiver verifies
 * as Standard Webhooks specifies.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceivers, verifyStandard } from '../fixtures/webhook/receivers.js';

const CLI = resolve(import.meta.dirname, '../../dist/cli.js');
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function run(env: Record<string, string>, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI], {
      env: { PATH: process.env.PATH ?? '', HOME: env.NOTIFY_DATA_DIR!, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const call = (args: Record<string, unknown>) =>
  `${JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'send_notification',
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'webhook-cli', version: '1' },
      },
    },
  })}\n`;

describe('webhook through the built CLI', () => {
  let receivers: Awaited<ReturnType<typeof startReceivers>>;
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('run npm run build first');
    receivers = await startReceivers({ standard: verifyStandard(SECRET) });
  });
  afterAll(() => receivers?.close());

  const env = (secret: string) => ({
    NOTIFY_DATA_DIR: mkdtempSync(join(tmpdir(), 'notify-webhook-cli-')),
    NOTIFY_WEBHOOKS: `alerts=standard:http://127.0.0.1:${receivers.port}/standard`,
    NOTIFY_WEBHOOK_SECRET_ALERTS: secret,
    NOTIFY_WEBHOOK_PRIVATE_HOSTS: '127.0.0.1',
    NOTIFY_WEBHOOK_ALLOW: '*',
  });

  it('refuses to start with a secret that is not whsec_-shaped, and sends nothing', async () => {
    const { code, stderr } = await run(env('hunter2'), call({ via: 'webhook', target: 'alerts', text: 'x' }));
    expect(code).not.toBe(0);
    expect(stderr).toContain('NOTIFY_WEBHOOK_SECRET_ALERTS is not a Standard Webhooks secret: it must read whsec_');
    expect(receivers.received).toHaveLength(0);
  });

  it('posts a signed request the receiver verifies', async () => {
    const { stdout, stderr } = await run(env(SECRET), call({ via: 'webhook', target: 'alerts', text: 'Deploy 142 is live.' }));
    const answer = JSON.parse(stdout.trim().split('\n')[0]!) as { result: { structuredContent: { id: string; status: string } } };
    expect(answer.result.structuredContent, stderr).toMatchObject({ status: 'sent', via: 'webhook', provider: 'webhook' });
    expect(receivers.received).toHaveLength(1);
    expect(receivers.received[0]!.refused).toBeUndefined();
    expect(receivers.received[0]!.headers['webhook-id']).toBe(answer.result.structuredContent.id);
  });
});
