/**
 * Approved held sends whose release meets SMTP 451 while the PostgreSQL connections are cut
 * (soak/results.md, "Found" 1 and 2): two replicas through the soak's TCP proxy, 24 held
 * emails approved alternately on each (each release then retries 451s), the proxy cuts every
 * connection 150 ms later for 3 s while each is edited on the other replica, SMTP healthy
 * again 3.5 s after; after 40 s, each send's state and what the SMTP fake received. Needs
 * PostgreSQL at postgres://postgres@127.0.0.1:5432/test (a database is made and dropped).
 *
 *   node --import ./test/register.mjs soak/repro/approved-release-store-cut.mjs
 *
 * Seen 2026-12-06: 8 of 24 ended unknown/DELIVERY_UNKNOWN with nothing delivered; edits
 * during the 451 retries answered ALREADY_SENT "was approved and has left"; none stayed
 * `approved` (the soak's stuck ones did not reproduce this way).
 */
import { createRequire } from 'node:module'; const pg = createRequire(import.meta.url)('pg');
import { startServer } from '../lib/server.mjs';
import { startSmtp, startTwilio, startSlack } from '../lib/fakes.mjs';
import { callTool, httpTokens, OPERATOR } from '../lib/load.mjs';
import { startOperator } from '../lib/operator.mjs';
import { startTcpProxy } from '../lib/tcp-proxy.mjs';
import { makeDataDir } from '../lib/disk.mjs';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MODE = process.argv[2] ?? 'cut';
const PG_BASE = 'postgres://postgres@127.0.0.1:5432/test';
const dbName = `stuck_${process.pid}`;
const admin = new pg.Client({ connectionString: PG_BASE }); await admin.connect(); await admin.query(`CREATE DATABASE ${dbName}`); await admin.end();
const proxy = await startTcpProxy('127.0.0.1', 5432);
const [smtp, twilio, slack] = await Promise.all([startSmtp(), startTwilio(), startSlack()]);
const data = makeDataDir('notify-stuck-', 16);
const env = { SMTP_URL: smtp.url, EMAIL_FROM: 'soak <soak@notify.test>', NOTIFY_EMAIL_ALLOW: 'example.com', TWILIO_ACCOUNT_SID: 'AC' + '5'.repeat(32), TWILIO_AUTH_TOKEN: 'x', TWILIO_FROM: '+14155550100', TWILIO_API_URL: twilio.origin, NOTIFY_SMS_ALLOW: '+1415', SLACK_BOT_TOKEN: 'xoxb-soak', SLACK_API_URL: slack.origin, NOTIFY_SLACK_ALLOW: 'C0SOAK001', NOTIFY_APPROVAL: 'recipients>2,broadcast', NOTIFY_APPROVAL_MODE: 'console', NOTIFY_SLACK_ALLOW_BROADCAST: '1', NOTIFY_HTTP_TOKENS: httpTokens(1), NOTIFY_OPERATOR_CLIENTS: OPERATOR, NOTIFY_DATA_DIR: data.dir, NOTIFY_SCHEDULE_POLL_S: '2', NOTIFY_SCHEDULE_GRACE_S: '5', NOTIFY_SEND_BUDGET_MS: '8000', NOTIFY_LOG_LEVEL: 'info', DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/${dbName}` };
const srv = await startServer('stuck', env, { gcMs: 0, heapSnapshots: '' });
const data2 = makeDataDir('notify-stuck2-', 16);
const srv2 = await startServer('stuck2', { ...env, NOTIFY_DATA_DIR: data2.dir }, { gcMs: 0, heapSnapshots: '' });
const records = [];
const op = startOperator({ record: (r) => records.push(r) });
const items = [];
for (let i = 0; i < 24; i++) {
  const token = `sk0x${i}`;
  const o = await callTool(srv.url, 'send_notification', { via: 'email', to: ['ops@example.com', 'oncall@example.com', 'a.b@example.com'], subject: `soak ${token}`, body_html: `<p>Soak held <b>${token}</b> soakv0</p>` }, 'soak-0');
  items.push({ id: o.structured.id, token });
}
smtp.setMode(MODE === 'hang' ? 'hang' : '5xx', 1);
items.forEach((it, i) => op.enqueue({ id: it.id, token: it.token, via: 'email', client: 'soak-0', urls: [i % 2 ? srv.url : srv2.url], choice: 'approve', thinkMs: 0, edit: () => {} }));
await op.finish();
const edits = [];
setTimeout(() => { proxy.cut(3000); console.log('cut at', new Date().toISOString()); }, 150);
items.forEach((it, i) => edits.push(sleep(i * 15).then(async () => { const o = await callTool(i % 2 ? srv2.url : srv.url, 'edit_notification', { id: it.id, text: `<p>Soak held <b>${it.token}</b> soakv1</p>` }, 'soak-0'); console.log('edit', it.id, o.code, o.structured?.status ?? o.structured?.error?.message?.slice(0, 80)); })));
await Promise.all(edits);
for (const d of records) console.log(d.id, d.outcome, d.said.slice(0, 80));
await sleep(3500);
smtp.setMode('ok');
await sleep(40000);
for (const it of items) { const g = await callTool(srv.url, 'get_notification', { id: it.id }, 'soak-0'); console.log('final', it.id, g.code, g.structured?.status, g.structured?.error_code, 'delivered', smtp.versions.get(it.token)); }
const ids = new Set(items.map((i) => i.id)); srv.logLines.push(...srv2.logLines.map((l) => 'B ' + l));
for (const l of srv.logLines) if ([...ids].some((id) => l.includes(id)) || l.includes('"error"') || l.includes('"warn"')) console.log(l.slice(0, 260));
await srv.stop(); await srv2.stop(); data2.cleanup(); await Promise.all([smtp, twilio, slack].map((f) => f.close())); await proxy.close(); data.cleanup();
const a2 = new pg.Client({ connectionString: PG_BASE }); await a2.connect(); await a2.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await a2.end();
