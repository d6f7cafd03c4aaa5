/**
 * The held-send invariant end to end against one built server (SQLite), outside the soak:
 * six held emails approved through the soak's operator while SMTP answers 451 (so each
 * approved send waits in the outbox), each then edited (soakv1), SMTP healthy again; then
 * heldFigures over what the fake received. Prints the figures and the breaks.
 *
 *   node --import ./test/register.mjs soak/repro/held-edit-after-approval.mjs [revise]
 *
 * On a correct build: no break (the edits take the approved sends back: pending_approval).
 * Used in soak/results.md with two temporary edits of dist/cli-chunks (restore them after,
 * or `npm run build`):
 * - class 1 put back: in config-*.js, `if (held.status !== "approved") throw` and the
 *   `payload_sha256 !== approvedSha256` test made `if (false)`; in catalog-*.js, the
 *   `moveWaiting(record.id, ["scheduled", "held"], "cancelled", at))?.moved) throw` test
 *   made `if (false)`: the check reports texts no decision approved.
 * - `revise`: in catalog-*.js, before `if (!await ctx.store.reviseHeld(record.id, {`, add
 *   `if (from === "approved" && process.env.SOAK_INJECT_REVISE) throw new NotifyError("STORE_UNAVAILABLE", "injected");`
 *   (a store fault between the two writes of an edit of an approved send): sends stay
 *   `approved` for good.
 */
const REVISE = process.argv[2] === 'revise';
import { startServer } from '../lib/server.mjs';
import { startSmtp, startTwilio, startSlack } from '../lib/fakes.mjs';
import { callTool, httpTokens, OPERATOR } from '../lib/load.mjs';
import { startOperator } from '../lib/operator.mjs';
import { heldFigures } from '../lib/figures.mjs';
import { makeDataDir } from '../lib/disk.mjs';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const [smtp, twilio, slack] = await Promise.all([startSmtp(), startTwilio(), startSlack()]);
const data = makeDataDir('notify-inject-', 16);
const env = { SMTP_URL: smtp.url, EMAIL_FROM: 'soak <soak@notify.test>', NOTIFY_EMAIL_ALLOW: 'example.com', TWILIO_ACCOUNT_SID: 'AC' + '5'.repeat(32), TWILIO_AUTH_TOKEN: 'x', TWILIO_FROM: '+14155550100', TWILIO_API_URL: twilio.origin, NOTIFY_SMS_ALLOW: '+1415', SLACK_BOT_TOKEN: 'xoxb-soak', SLACK_API_URL: slack.origin, NOTIFY_SLACK_ALLOW: 'C0SOAK001', NOTIFY_APPROVAL: 'recipients>2,broadcast', NOTIFY_APPROVAL_MODE: 'console', NOTIFY_SLACK_ALLOW_BROADCAST: '1', NOTIFY_HTTP_TOKENS: httpTokens(1), NOTIFY_OPERATOR_CLIENTS: OPERATOR, NOTIFY_DATA_DIR: data.dir, NOTIFY_SCHEDULE_POLL_S: '1', NOTIFY_SEND_BUDGET_MS: '3000', ...(REVISE ? { SOAK_INJECT_REVISE: '1', NOTIFY_APPROVAL_TTL_S: '5' } : {}) };
const srv = await startServer('inject', env, { gcMs: 0, heapSnapshots: '' });
const records = [];
const op = startOperator({ record: (r) => records.push(r) });
const helds = [];
const items = [];
for (let i = 0; i < 6; i++) {
  const token = `sk0x${i}`;
  const o = await callTool(srv.url, 'send_notification', { via: 'email', to: ['ops@example.com', 'oncall@example.com', 'a.b@example.com'], subject: `soak ${token}`, body_html: `<p>Soak held message <b>${token}</b> soakv0</p>` }, 'soak-0');
  helds.push({ kind: 'held', token, ...o });
  items.push({ id: o.structured.id, token });
}
smtp.setMode('5xx', 1);
for (const it of items) op.enqueue({ id: it.id, token: it.token, via: 'email', client: 'soak-0', urls: [srv.url], choice: 'approve', thinkMs: 0, raceEdit: false, lateEdit: false, reround: false, edit: () => {} });
await op.finish();
await sleep(1000);
for (const it of items) {
  const o = await callTool(srv.url, 'edit_notification', { id: it.id, text: `<p>Soak held message <b>${it.token}</b> soakv1</p>` }, 'soak-0');
  records.push({ kind: 'edit', target: 'held', id: it.id, token: it.token, version: 1, start: Date.now(), ...o });
}
smtp.setMode('ok');
await sleep(8000);
await op.expire([srv.url]);
const finals = new Map();
for (const it of items) { const g = await callTool(srv.url, 'get_notification', { id: it.id }, 'soak-0'); finals.set(it.id, { code: g.code, status: g.structured?.status, error_code: g.structured?.error_code }); }
const r = heldFigures({ helds, edits: records.filter((x) => x.kind === 'edit'), decisions: records.filter((x) => x.kind === 'decision'), finals, versions: smtp.versions });
console.log(JSON.stringify({ decisions: r.figures.decisions.by_outcome, said: r.figures.decisions.said, edits: r.figures.edits.answers, final: r.figures.final, delivered: [...smtp.versions], breaks: r.breaks }, null, 1));
await srv.stop(); await Promise.all([smtp, twilio, slack].map((f) => f.close())); data.cleanup();
