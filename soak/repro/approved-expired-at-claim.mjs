/**
 * An approved held send whose outbox entry expires at its next claim stays `approved` for
 * good (soak/results.md, "Found" 1): one server on PostgreSQL through the soak's TCP proxy,
 * NOTIFY_SCHEDULE_GRACE_S=5; 24 held emails approved while SMTP answers 451 (each release
 * retries, then is "held again" with a backoff); 3 s later the proxy cuts every connection
 * and refuses new ones for CUT_MS (9 s: longer than the grace); SMTP healthy after; after
 * 40 s, each send's state, what the SMTP fake received, and the server's lines about it.
 * Needs PostgreSQL at postgres://postgres@127.0.0.1:5432/test (a database is made and dropped).
 *
 *   CUT_MS=9000 CUT_AFTER_MS=3000 node --import ./test/register.mjs soak/repro/approved-expired-at-claim.mjs
 *
 * Seen twice 2026-12-06 (h-soak at b117f59's src): 2 of 24 `approved` for good (the claim
 * after the cut logged "scheduled send expired" for them and wrote nothing to their record),
 * 22 of 24 `unknown`/DELIVERY_UNKNOWN, and none delivered (SMTP had refused every attempt).
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
const records = [];
const op = startOperator({ record: (r) => records.push(r) });
const items = [];
for (let i = 0; i < 24; i++) {
  const token = `sk0x${i}`;
  const o = await callTool(srv.url, 'send_notification', { via: 'email', to: ['ops@example.com', 'oncall@example.com', 'a.b@example.com'], subject: `soak ${token}`, body_html: `<p>Soak held <b>${token}</b> soakv0</p>` }, 'soak-0');
  items.push({ id: o.structured.id, token });
}
smtp.setMode(MODE === 'hang' ? 'hang' : '5xx', 1);
for (const it of items) op.enqueue({ id: it.id, token: it.token, via: 'email', client: 'soak-0', urls: [srv.url], choice: 'approve', thinkMs: 0, edit: () => {} });
const fin = op.finish();
await sleep(Number(process.env.CUT_AFTER_MS ?? 1500));
if (MODE !== 'nocut') { proxy.cut(Number(process.env.CUT_MS ?? 3000)); console.log('cut at', new Date().toISOString()); }
await fin;
for (const d of records) console.log(d.id, d.outcome, d.said);
await sleep(Number(process.env.CUT_MS ?? 3000) + 500);
smtp.setMode('ok');
await sleep(40000);
for (const it of items) { const g = await callTool(srv.url, 'get_notification', { id: it.id }, 'soak-0'); console.log('final', it.id, g.code, g.structured?.status, g.structured?.error_code, 'delivered', smtp.versions.get(it.token)); }
const ids = new Set(items.map((i) => i.id));
for (const l of srv.logLines) if ([...ids].some((id) => l.includes(id)) || l.includes('"error"') || l.includes('"warn"')) console.log(l.slice(0, 260));
await srv.stop(); await Promise.all([smtp, twilio, slack].map((f) => f.close())); await proxy.close(); data.cleanup();
const a2 = new pg.Client({ connectionString: PG_BASE }); await a2.connect(); await a2.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await a2.end();
