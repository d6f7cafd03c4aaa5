import { fail, pass, type Check, type CheckContext } from '../core/check.js';
import type { Allowlist } from '../policy/allowlist.js';
import { isLive, type ChannelSettings, type LiveSettings } from './settings.js';

/** A channel's doctor lines; a check that throws is a failed line, never a crash. */
export async function checkChannel<S extends ChannelSettings>(
  module: {
    name: string;
    allowlist: { variable: string };
    check?: (s: LiveSettings<S>, a: Allowlist | undefined, c: CheckContext) => Promise<Check[]>;
  },
  settings: S,
  allow: Allowlist | undefined,
  ctx: CheckContext,
): Promise<Check[]> {
  const { name } = module;
  const variable = module.allowlist.variable;
  if (!isLive(settings)) {
    const list = allow === undefined ? 'no allowlist (every recipient is recorded, none reached)' : `${variable} applied`;
    return [pass(name, `dry-run: sends are recorded in the store and nothing leaves; ${list}. Set its credentials to go live.`)];
  }
  const reach = allow!.any
    ? 'any recipient (*)'
    : allow!.entries.length
      ? `${allow!.entries.length} allowed (${allow!.entries.join(', ')})`
      : 'none: every send is refused';
  const lines = [pass(name, `live; ${variable}: ${reach}`)];
  if (!module.check) return [...lines, pass(name, 'live; this channel brings no doctor check of its provider')];
  try {
    return [...lines, ...(await module.check(settings, allow, ctx))];
  } catch (err) {
    return [
      ...lines,
      fail(name, `the check failed unexpectedly: ${(err as Error).message}`, 'run it again; if it persists, report it with this line'),
    ];
  }
}
