/**
 * A TCP proxy between the servers and PostgreSQL (node:net), so the soak can cut the
 * database connection mid-run: cut(ms) destroys every open connection and refuses new
 * ones for ms, as a network partition or a database restart would.
 */
import { connect, createServer } from 'node:net';

export async function startTcpProxy(targetHost, targetPort) {
  const pairs = new Set();
  let refuseUntil = 0;
  let cuts = 0;
  let refused = 0;
  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      refused++;
      return client.destroy();
    }
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    stats: () => ({ cuts, refused, open: pairs.size }),
    cut(ms) {
      cuts++;
      refuseUntil = Date.now() + ms;
      for (const { client, upstream } of [...pairs]) {
        client.destroy();
        upstream.destroy();
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
