/**
 * `notify-mcp doctor`: what an operator runs before going live. Reads the configuration as
 * the server would, then checks each channel (its own module's check: credentials,
 * reachability, what its settings name), the store and the HTTP settings. Sends nothing,
 * creates nothing. One line per check, ✓ or ✗ with the fix; `ok` only when all pass.
 */
import type { Channel } from '../../channels/channel.js';
import { CHANNELS } from '../../channels/registry.js';
import { ConfigError, loadConfig, type Config } from '../../config/config.js';
import type { Env } from '../../core/env.js';
import { fail, pass, type Check } from '../../core/check.js';
import { httpChecks } from './http.js';
import { storeCheck } from './store.js';
import { capsChecks } from './caps.js';
import { toolsCheck } from './tools.js';
import { describePolicy } from '../../notification/escalation-policy.js';

export interface DoctorReport {
  ok: boolean;
  checks: Check[];
}

export interface DoctorOptions {
  /** The address `--http` would bind (default 127.0.0.1), for the HTTP checks. */
  host?: string;
  /** How long one network check may take. */
  timeoutMs?: number;
  channels?: readonly Channel[];
}

const DEFAULT_TIMEOUT_MS = 10_000;

export async function runDoctor(env: Env, opts: DoctorOptions = {}): Promise<DoctorReport> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let config: Config;
  try {
    config = loadConfig(env, opts.channels ?? CHANNELS);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Nothing else can be checked against settings that do not read.
    const check = fail(
      'configuration',
      err.message,
      'set the variable as the message says (.env.example lists every one), then run doctor again',
    );
    return { ok: false, checks: [check] };
  }
  const checks: Check[] = [pass('configuration', 'every variable reads and every allowlist parses')];
  // Channels one after another: each line in the registry's order, and no burst at the providers.
  for (const channel of config.channels) checks.push(...(await channel.check({ timeoutMs })));
  checks.push(await storeCheck(config, timeoutMs));
  checks.push(...(await capsChecks(config)));
  // Each step was checked against its channel and allowlist as the configuration loaded.
  for (const p of config.escalations) checks.push(pass('escalation', describePolicy(p)));
  checks.push(...httpChecks(config, opts.host));
  checks.push(toolsCheck(config));
  return { ok: checks.every((c) => c.ok), checks };
}

/** The report as a person reads it: one line per check, the fix on failures. */
export function formatReport(report: DoctorReport): string {
  const lines = report.checks.map((c) => `${c.ok ? '✓' : '✗'} ${c.name}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}`);
  const failed = report.checks.filter((c) => !c.ok).length;
  lines.push(failed ? `${failed} of ${report.checks.length} checks failed.` : `All ${report.checks.length} checks passed.`);
  return lines.join('\n');
}
