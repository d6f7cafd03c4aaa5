import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, eraClient, serverEnv, tempDir } from '/work/main/bench/lib/servers.mjs';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
const SID = 'AC' + '1'.repeat(32);
const child = spawn(process.execPath, ['--import', join(ROOT, 'test/register.mjs'), join(ROOT, 'bench/lib/peers.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
const [line] = await once(createInterface({ input: child.stdout }), 'line');
const peers = JSON.parse(line);
const via = process.argv[2] ?? 'sms';
const env = serverEnv({ NOTIFY_DATA_DIR: tempDir(), SMTP_URL: `smtp://127.0.0.1:${peers.smtpPort}`, EMAIL_FROM: 'bench <bench@example.com>', NOTIFY_EMAIL_ALLOW: 'example.com',
  TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'bench-token', TWILIO_FROM: '+14155550111', TWILIO_API_URL: peers.twilio, NOTIFY_SMS_ALLOW: '+1415',
  SLACK_BOT_TOKEN: 'xoxb-bench', SLACK_API_URL: peers.slack, NOTIFY_SLACK_ALLOW: 'C0123ABCD' });
const client = eraClient('legacy');
await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', '--cpu-prof-interval=100', join(ROOT, 'dist/cli.js')], env, stderr: 'ignore' }));
const notify = { client, close: () => client.close() };
const args = { sms: { via: 'sms', to: '+14155550123', body: 'Server down' }, slack: { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished' }, email: { via: 'email', to: 'ops@example.com', subject: 'Deploy', body_html: '<p>Deployed</p>' } }[via];
for (let i = 0; i < 3000; i++) { const r = await notify.client.callTool({ name: 'send_notification', arguments: args }); if (r.isError) throw new Error(JSON.stringify(r.structuredContent)); }
await notify.close();
child.stdin.end();
