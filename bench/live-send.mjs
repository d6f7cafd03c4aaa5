/**
 * Live-send overhead: one live send through notify-mcp over stdio (SDK client, end to end)
 * against the same send made by the provider's library alone, to the same local peer:
 * nodemailer to smtp-server, the twilio client to a fake Twilio, WebClient to a fake Slack,
 * fetch to a webhook receiver (a signed standard target: issue 38 asks for no more overhead
 * over fetch than the Slack row has over WebClient).
 * The provider's round trip is the floor; the row is the ratio and the difference at p50.
 * The peers run in a process of their own (bench/lib/peers.mjs), as a provider is remote to
 * both sides; both sides are warmed the same way, over connections they keep (nodemailer's
 * pool, the HTTP agents' keep-alive), as notify-mcp's providers do.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { ROOT, connectStdio, serverEnv, tempDir } from './lib/servers.mjs';
import { quantile } from './lib/stats.mjs';

const SID = 'AC' + '1'.repeat(32);
const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The three peers in their own process (bench/lib/peers.mjs): their origins, and a close. */
async function startPeers() {
  const child = spawn(process.execPath, ['--import', join(ROOT, 'test/register.mjs'), join(ROOT, 'bench/lib/peers.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const peers = JSON.parse(line);
  return { ...peers, smtpUrl: `smtp://127.0.0.1:${peers.smtpPort}`, close: () => child.stdin.end() };
}

async function p50(fn, calls, warmup) {
  for (let i = 0; i < warmup; i++) await fn(i);
  const times = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  return quantile(times, 0.5);
}

export async function benchLiveSend({ calls = 200, warmup = 50, runs = 3 } = {}) {
  const peers = await startPeers();
  const env = serverEnv({
    NOTIFY_DATA_DIR: tempDir(),
    SMTP_URL: peers.smtpUrl,
    EMAIL_FROM: 'bench <bench@example.com>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
    TWILIO_ACCOUNT_SID: SID,
    TWILIO_AUTH_TOKEN: 'bench-token',
    TWILIO_FROM: '+14155550111',
    TWILIO_API_URL: peers.twilio,
    NOTIFY_SMS_ALLOW: '+1415',
    SLACK_BOT_TOKEN: 'xoxb-bench',
    SLACK_API_URL: peers.slack,
    NOTIFY_SLACK_ALLOW: 'C0123ABCD',
    NOTIFY_WEBHOOKS: `alerts=standard:${peers.webhook}/hook`,
    NOTIFY_WEBHOOK_SECRET_ALERTS: WHSEC,
    NOTIFY_WEBHOOK_PRIVATE_HOSTS: '127.0.0.1',
    NOTIFY_WEBHOOK_ALLOW: 'alerts',
  });
  const notify = await connectStdio('notify', env, 'legacy');

  const nodemailer = (await import('nodemailer')).default;
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: peers.smtpPort, secure: false, ignoreTLS: true, pool: true });
  const Twilio = (await import('twilio')).default;
  const twilioClient = Twilio(SID, 'bench-token');
  // The client's own origin, pointed at the fake (what TWILIO_API_URL does inside notify-mcp).
  twilioClient.api.baseUrl = peers.twilio;
  const { WebClient } = await import('@slack/web-api');
  const web = new WebClient('xoxb-bench', { slackApiUrl: `${peers.slack}/`, retryConfig: { retries: 0 } });

  const channels = [
    {
      name: 'email (nodemailer to smtp-server)',
      viaNotify: () => notify.client.callTool({ name: 'send_notification', arguments: { via: 'email', to: 'ops@example.com', subject: 'Deploy', body_html: '<p>Deployed</p>' } }),
      viaLibrary: () => mailer.sendMail({ from: 'bench@example.com', to: 'ops@example.com', subject: 'Deploy', html: '<p>Deployed</p>', text: 'Deployed' }),
    },
    {
      name: 'sms (twilio client to a fake Twilio)',
      viaNotify: () => notify.client.callTool({ name: 'send_notification', arguments: { via: 'sms', to: '+14155550123', body: 'Server down' } }),
      viaLibrary: () => twilioClient.messages.create({ to: '+14155550123', from: '+14155550111', body: 'Server down' }),
    },
    {
      name: 'slack (WebClient to a fake Slack)',
      viaNotify: () => notify.client.callTool({ name: 'send_notification', arguments: { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished' } }),
      viaLibrary: () => web.chat.postMessage({ channel: 'C0123ABCD', text: 'Deploy finished' }),
    },
    {
      name: 'webhook (a signed standard post; fetch to a receiver)',
      viaNotify: () => notify.client.callTool({ name: 'send_notification', arguments: { via: 'webhook', target: 'alerts', text: 'Deploy finished' } }),
      viaLibrary: async (i) => {
        const body = JSON.stringify({ type: 'notification', id: `ntf_${i}`, title: null, text: 'Deploy finished', fields: [] });
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature = createHmac('sha256', Buffer.from(WHSEC.slice(6), 'base64')).update(`ntf_${i}.${timestamp}.${body}`).digest('base64');
        const res = await fetch(`${peers.webhook}/hook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'webhook-id': `ntf_${i}`, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` },
          body,
        });
        await res.arrayBuffer();
      },
    },
  ];
  const rows = [];
  try {
    for (const c of channels) {
      const first = await c.viaNotify();
      if (first.isError) throw new Error(`${c.name}: notify-mcp answered ${JSON.stringify(first.structuredContent).slice(0, 200)}`);
      const ours = [];
      const theirs = [];
      for (let r = 0; r < runs; r++) {
        theirs.push(await p50(c.viaLibrary, calls, warmup));
        ours.push(await p50(c.viaNotify, calls, warmup));
      }
      const median = (xs) => quantile(xs, 0.5);
      const ratios = ours.map((x, i) => x / theirs[i]);
      rows.push({
        section: '8. Live-send overhead',
        name: `live send, ${c.name}, p50 per call over stdio`,
        unit: 'ms',
        better: 'lower',
        value: { median: median(ours), lo: Math.min(...ours), hi: Math.max(...ours), n: runs },
        baselineName: 'the same send by the library alone, to the same peer',
        baseline: { median: median(theirs), lo: Math.min(...theirs), hi: Math.max(...theirs), n: runs },
        ratio: { median: median(ours) / median(theirs), lo: Math.min(...ratios), hi: Math.max(...ratios) },
        target: { max: 1.15, text: '≤ 1.15x and ≤ 1 ms over the library at p50' },
        note: `+${(median(ours) - median(theirs)).toFixed(2)} ms at p50`,
      });
    }
  } finally {
    await notify.close();
    mailer.close();
    peers.close();
  }
  return rows;
}

// `node bench/live-send.mjs` (after `npm run build`): the four rows.
if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  for (const r of await benchLiveSend(quick ? { calls: 50, warmup: 20, runs: 1 } : {})) {
    console.log(`${r.name}: ${r.value.median.toFixed(2)} ms vs ${r.baseline.median.toFixed(2)} ms: ${r.ratio.median.toFixed(2)}x (${r.note})`);
  }
  process.exit(0);
}
