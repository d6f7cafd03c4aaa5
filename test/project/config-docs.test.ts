/**
 * The configuration a user reads agrees with the one the code reads: every variable
 * src/config/config.ts reads or a channel module declares is in .env.example and the other way
 * round, and the contract's names are all there. (docker-compose.yml: test/project/compose.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../src/channels/registry.js';
import { ROOT } from '../helpers/cli.js';

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
// Read as env.NAME, or by name through a helper (positiveInt(env, 'NAME', …)).
const configVars = new Set(
  [...read('src/config/config.ts').matchAll(/env\.([A-Z][A-Z0-9_]+)|env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] ?? m[2]!),
);
const exampleVars = new Set([...read('.env.example').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));
// A channel module reads only the variables it declares (settings() is given no others); a
// family (NOTIFY_WEBHOOK_SECRET_*) is shown in .env.example by one example of its own.
for (const channel of CHANNELS)
  for (const v of [...channel.variables, channel.allowlist.variable]) {
    const family = v.endsWith('*') ? [...exampleVars].filter((e) => e.startsWith(v.slice(0, -1))) : [v];
    expect(family.length, `${v} in .env.example`).toBe(1);
    for (const name of family) configVars.add(name);
  }
const PLATFORM = new Set(['HOME', 'XDG_DATA_HOME']);

const DESIGN_VARS = [
  'NOTIFY_EMAIL_ALLOW',
  'NOTIFY_SMS_ALLOW',
  'NOTIFY_SLACK_ALLOW',
  'NOTIFY_DATA_DIR',
  'DATABASE_URL',
  'SMTP_URL',
  'EMAIL_FROM',
  'TWILIO_ACCOUNT_SID',
  'TWILIO_AUTH_TOKEN',
  'TWILIO_FROM',
  'TWILIO_MESSAGING_SERVICE_SID',
  'SLACK_BOT_TOKEN',
  'TWILIO_API_URL',
  'SLACK_API_URL',
  'NOTIFY_HTTP_TOKENS',
  'NOTIFY_READ_AUTH',
  'NOTIFY_CLIENT_PROFILES',
  'NOTIFY_DEFAULT_PROFILE',
  'NOTIFY_RATE_LIMITS',
];

describe('configuration documents', () => {
  it('.env.example lists exactly what src/config/config.ts and the channels read, each with a comment', () => {
    expect([...exampleVars].sort()).toEqual([...configVars].filter((v) => !PLATFORM.has(v)).sort());
    const lines = read('.env.example').split('\n');
    for (const v of exampleVars) {
      const at = lines.findIndex((l) => new RegExp(`^#? ?${v}=`).test(l));
      expect(lines[at - 1], v).toMatch(/^# /);
    }
  });

  it("docs/configuration.md's table of variables lists exactly those of .env.example, in its order", () => {
    const doc = read('docs/configuration.md');
    const table = doc.slice(doc.indexOf('## Every variable'));
    const rows = [...table.slice(0, table.indexOf('\n## ')).matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| \S/gm)].map((m) => m[1]!);
    expect(rows).toEqual([...exampleVars]);
  });

  it('has every variable the contract names', () => {
    for (const v of DESIGN_VARS) expect(exampleVars, v).toContain(v);
  });
});
