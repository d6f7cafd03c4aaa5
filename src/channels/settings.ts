/** What every channel's settings hold, and the reading of them that every channel shares. */
import type { Env } from '../core/env.js';

/** What every channel's settings say; a module adds its own (credentials, sender…). */
export interface ChannelSettings {
  /** Credentials are set: sends go to the provider. Otherwise the channel runs in dry-run. */
  readonly live: boolean;
  /**
   * A call of this channel may be this much larger than the transports' ordinary message cap
   * (email attachments), and the variable that sets it: the caps grow with it, and say so.
   */
  readonly largerCalls?: { readonly bytes: number; readonly variable: string };
  /** False: nothing to offer under these settings (webhook without a target), so loadConfig leaves it out of every schema. */
  readonly offered?: boolean;
}

/** Settings of a live channel: what createProvider receives. */
export type LiveSettings<S extends ChannelSettings> = S & { readonly live: true };

export function isLive<S extends ChannelSettings>(settings: S): settings is LiveSettings<S> {
  return settings.live;
}

/** The variables `declared`, and no other, out of `env`; a declared `PREFIX_*` brings every variable with that prefix. */
export function only<K extends string>(env: Env, declared: readonly K[]): Env<K> {
  const wanted = (key: string) => declared.some((d) => (d.endsWith('*') ? key.startsWith(d.slice(0, -1)) : key === d));
  return Object.fromEntries(Object.entries(env).filter(([key]) => wanted(key))) as Env<K>;
}
