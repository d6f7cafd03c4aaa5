import type { Provider } from './types.js';

/**
 * The provider of a channel without credentials: accepts any payload and sends nothing.
 * The pipeline records the exact payload in the delivery log, which is the point of dry-run.
 */
export const dryRunProvider: Provider<unknown> = {
  name: 'dry-run',
  async send() {
    return {};
  },
};
