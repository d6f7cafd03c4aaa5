/**
 * A bounded keep-alive load loop from Node (no autocannon here): `concurrency` workers
 * share one http.Agent and each sends GETs back to back until the deadline, reading every
 * body in full. Any non-200 stops the run, so an error page is never counted as throughput.
 */
import { Agent, request } from 'node:http';

function get(agent, port, path) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let bytes = 0;
      res.on('data', (c) => (bytes += c.length));
      res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`GET ${path}: HTTP ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export async function fetchBody(port, path) {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** Returns requests per second over `ms`. */
export async function load(port, path, { concurrency = 8, ms = 2_000 } = {}) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let done = 0;
  const t0 = performance.now();
  const deadline = t0 + ms;
  const worker = async () => {
    while (performance.now() < deadline) {
      await get(agent, port, path);
      done++;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return (done * 1000) / (performance.now() - t0);
}
