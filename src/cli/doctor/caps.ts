/** The caps lines of `notify-mcp doctor`: each NOTIFY_CAPS rule, and what each client has left of it now (read from the store). */
import { pass, type Check } from '../../core/check.js';
import type { Config } from '../../config/config.js';
import { silentLogger } from '../../core/log.js';
import { capsLeft } from '../../policy/caps.js';
import { openStore } from '../../store/index.js';
import type { CapCounter } from '../../store/types.js';

export async function capsChecks(config: Config, now = Date.now()): Promise<Check[]> {
  if (config.caps.length === 0) return [];
  let counters: CapCounter[];
  try {
    const store = await openStore(config, silentLogger, { existing: true });
    try {
      counters = await store.listCapCounters(now);
    } finally {
      await store.close();
    }
  } catch {
    // The store line says why it cannot be read; the caps themselves read.
    counters = [];
  }
  return capsLeft(config.caps, counters).map(({ client, rule, used, left, resets_at }) =>
    pass(
      'caps',
      `${client === '*' ? 'each client' : client}: ${left} of ${rule.limit} ${rule.measure} per ${rule.period} left` +
        (client === '*'
          ? ' (until it sends)'
          : `${used ? `, ${used} used` : ''}${resets_at ? `, resets ${new Date(resets_at).toISOString()}` : ''}`),
    ),
  );
}
