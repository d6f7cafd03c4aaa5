/**
 * `notify-mcp worker`: the release loop alone, over the same store, for stdio-only setups,
 * where a server runs only while a host is connected: scheduled and held sends then leave
 * on time anyway. Any number of workers and servers may share a store; each due send goes
 * to one of them. Runs until SIGTERM/SIGINT.
 */
import { createApp } from '../app.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../core/log.js';
import { VERSION } from '../core/version.js';

export async function workerCommand(config: Config, log: Logger): Promise<number> {
  // The app's own release loop: it starts with a pass over what fell due while nothing ran.
  const app = await createApp(config, log);
  log.info('worker releasing scheduled sends', { version: VERSION, store: app.store.kind, pollS: config.time.pollMs / 1000 });
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info('worker stopping', { signal });
  await app.close();
  return 0;
}
