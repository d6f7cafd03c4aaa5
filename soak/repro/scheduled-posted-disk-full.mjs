/**
 * A scheduled send whose provider answers while SQLite's disk is full (soak/results.md,
 * "Found" 3): one server on SQLite in a 64 MB tmpfs (root), a Slack peer that answers each
 * post after 2 s; 4 Slack sends scheduled 1 s ahead; 0.5 s after they fall due (their posts
 * in flight) the tmpfs is filled to the last block, and freed 6 s later; then each send is
 * read with get_notification every 5 s for 60 s, with the server's lines about it.
 *
 *   node --import ./test/register.mjs soak/repro/scheduled-posted-disk-full.mjs
 */
import { createServer } from 'node:http';
import { startServer } from '../lib/server.mjs';
import { startSmtp, startTwilio } from '../lib/fakes.mjs';
import { callTool, httpTokens, OPERATOR } from '../lib/load.mjs';
import { fillDisk, makeDataDir } from '../lib/disk.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const posted = [];
const slack = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    await sleep(2000);
    const text = new URLSearchParams(body).get('text') ?? body;
    posted.push({ at: new Date().toISOString(), url: req.url, text: text.slice(0, 40) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, channel: 'C0SOAK001', ts: `1712345678.${String(posted.length).padStart(6, '0')}` }));
  });
});
await new Promise((r) => slack.listen(0, '127.0.0.1', r));
const [smtp, twilio] = await Promise.all([startSmtp(), startTwilio()]);
const data = makeDataDir('notify-full-', 64);
if (!data.tmpfs) throw new Error('needs root to mount a tmpfs');
const env = { SMTP_URL: smtp.url, EMAIL_FROM: 'soak <soak@notify.test>', NOTIFY_EMAIL_ALLOW: 'example.com', TWILIO_ACCOUNT_SID: 'AC' + '5'.repeat(32), TWILIO_AUTH_TOKEN: 'x', TWILIO_FROM: '+14155550100', TWILIO_API_URL: twilio.origin, NOTIFY_SMS_ALLOW: '+1415', SLACK_BOT_TOKEN: 'xoxb-soak', SLACK_API_URL: `http://127.0.0.1:${slack.address().port}`, NOTIFY_SLACK_ALLOW: 'C0SOAK001', NOTIFY_HTTP_TOKENS: httpTokens(1), NOTIFY_OPERATOR_CLIENTS: OPERATOR, NOTIFY_DATA_DIR: data.dir, NOTIFY_SCHEDULE_POLL_S: '2', NOTIFY_SCHEDULE_GRACE_S: '5', NOTIFY_SEND_BUDGET_MS: '8000', NOTIFY_LOG_LEVEL: 'info' };
const srv = await startServer('full', env, { gcMs: 0, heapSnapshots: '' });
const due = Date.now() + 1000;
const ids = [];
for (let i = 0; i < 4; i++) {
  const o = await callTool(srv.url, 'send_notification', { via: 'slack', channel: 'C0SOAK001', text: `soak sk0x${i} soakv0`, send_at: new Date(due).toISOString() }, 'soak-0');
  ids.push(o.structured.id);
}
await sleep(due + 500 - Date.now());
const filled = fillDisk(data.dir);
console.log('disk filled', new Date().toISOString());
await sleep(6000);
filled.free();
console.log('disk freed', new Date().toISOString());
for (let t = 0; t < 12; t++) {
  const states = [];
  for (const id of ids) states.push((await callTool(srv.url, 'get_notification', { id }, 'soak-0')).structured?.status);
  console.log(new Date().toISOString(), states.join(' '));
  await sleep(5000);
}
console.log('posted', JSON.stringify(posted));
for (const l of srv.logLines) if (ids.some((id) => l.includes(id)) && !l.includes('"provider attempt"')) console.log(l.slice(0, 240));
await srv.stop();
await Promise.all([smtp, twilio].map((f) => f.close()));
slack.closeAllConnections?.();
slack.close();
data.cleanup();
