/**
 * Row 11: an answer's latency (issue 37). A send asks; a get_notification waits on it
 * (wait_s); the answer page's form is POSTed; the figure is the time from the POST's start to
 * the waiting call's result. SQLite: one server. PostgreSQL: two replicas of one store, the
 * wait on one and the answer on the other. Baseline, interleaved: a bare HTTP round trip to
 * the replica the answer goes to (GET /healthz). Target: p99 ≤ 200 ms.
 *
 *   node bench/answers.mjs [--n 60]
 */
import { request } from 'node:http';
import { benchArgs } from './lib/args.mjs';
import { connectHttp, serverEnv, startHttpServer, tempDir } from './lib/servers.mjs';
import { quantile, sleep } from './lib/stats.mjs';
import { PG_URL, freshPgSchema, pgAvailable } from './store.mjs';

const OPS = 'ops-token-0123456789abcdef';
/** How long the waiting call is given to be registered with its process's poller before the answer goes. */
const SETTLE_MS = 150;

/** One HTTP exchange as a browser-less client makes it (no Origin: the page's own form is same-origin). */
function exchange(port, method, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { ...headers, ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The token of the answer link the dry run recorded in the message. */
async function tokenOf(port, id) {
  const { status, text } = await exchange(port, 'GET', `/console/notifications/${id}/payload.json`, undefined, { Authorization: `Bearer ${OPS}` });
  const token = /\/answer\/([A-Za-z0-9_-]{43})/.exec(text)?.[1];
  if (status !== 200 || !token) throw new Error(`no answer link in ${id}'s payload (${status})`);
  return token;
}

/** `n` rounds: ask on `waitOn`, wait there, answer on `answerOn`; each round's latency and a bare round trip beside it. */
async function rounds(waitOn, answerOn, n) {
  const { client, close } = await connectHttp(waitOn.url, 'modern', OPS);
  const answer = [];
  const bare = [];
  try {
    for (let i = 0; i < n; i++) {
      const sent = await client.callTool({ name: 'send_notification', arguments: { via: 'slack', channel: '#ops', text: `Disk ${i} is 91% full. Expand it?`, ask: { choices: ['Expand', 'Wait'] } } });
      const id = sent.structuredContent?.id;
      if (!id) throw new Error(`send refused: ${JSON.stringify(sent.structuredContent)}`);
      const token = await tokenOf(waitOn.port, id);
      const waiting = client.callTool({ name: 'get_notification', arguments: { id, wait_s: 20 } });
      await sleep(SETTLE_MS);
      const t0 = performance.now();
      const posted = await exchange(answerOn.port, 'POST', `/answer/${token}`, 'choice=Expand');
      if (posted.status !== 200) throw new Error(`answer refused: ${posted.status} ${posted.text.slice(0, 200)}`);
      const got = await waiting;
      answer.push(performance.now() - t0);
      if (got.structuredContent?.answer?.choice !== 'Expand') throw new Error(`the wait returned without the answer: ${JSON.stringify(got.structuredContent)}`);
      const b0 = performance.now();
      await exchange(answerOn.port, 'GET', '/healthz');
      bare.push(performance.now() - b0);
    }
  } finally {
    await close();
  }
  return { answer, bare };
}

function row(storeName, m, n) {
  const v = quantile(m.answer, 0.99);
  const b = quantile(m.bare, 0.99);
  return {
    section: '11. Answers',
    name: `${storeName}: answer POST → waiting get_notification's result, p99`,
    unit: 'ms',
    better: 'lower',
    value: { median: v, lo: quantile(m.answer, 0.5), hi: Math.max(...m.answer) },
    baselineName: 'a bare HTTP round trip to the same server (GET /healthz)',
    baseline: { median: b, lo: quantile(m.bare, 0.5), hi: Math.max(...m.bare) },
    ratio: { median: v / b },
    target: { text: 'p99 ≤ 200 ms', absolute: true, max: 200 },
    note: `figures: p99 (p50–max) over ${n} answers; slack dry-run; servers are dist/cli.js --http`,
  };
}

export async function benchAnswers({ n = 60 } = {}) {
  const env = (extra) =>
    serverEnv({ NOTIFY_HTTP_TOKENS: `ops:${OPS}`, NOTIFY_OPERATOR_CLIENTS: 'ops', NOTIFY_PUBLIC_URL: 'https://notify.example.com', ...extra });
  const rows = [];
  const dir = tempDir();
  const one = await startHttpServer('notify', env({ NOTIFY_DATA_DIR: dir, HOME: dir }));
  try {
    rows.push(row('SQLite, one server', await rounds(one, one, n), n));
  } finally {
    await one.stop();
  }
  if (!(await pgAvailable())) {
    rows.push({ section: '11. Answers', name: 'PostgreSQL: answer → waiting get_notification', skipped: `skipped: PostgreSQL at ${PG_URL} did not answer` });
    return rows;
  }
  const schema = await freshPgSchema();
  const replicas = [];
  try {
    for (let i = 0; i < 2; i++) {
      const d = tempDir();
      replicas.push(await startHttpServer('notify', env({ NOTIFY_DATA_DIR: d, HOME: d, DATABASE_URL: schema.url })));
    }
    rows.push(row('PostgreSQL, two replicas (wait on one, answer on the other)', await rounds(replicas[0], replicas[1], n), n));
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await schema.drop();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = benchArgs();
  const rows = await benchAnswers({ n: Number(args.opt('n', 60)) });
  const { markdownTable } = await import('./lib/table.mjs');
  process.stdout.write(`${markdownTable(rows)}\n`);
  const { removeTempDirs } = await import('./lib/servers.mjs');
  removeTempDirs();
}
