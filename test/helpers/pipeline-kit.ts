/**
 * The send pipeline's test kit, for the unit tests beside src/notification/ and src/mcp/tools/:
 * a counting fake provider (and a Slack-like one that edits and deletes), a real SQLite store
 * in a temporary file, the deps a use case takes, and the NotifyError a call fails with.
 * Configuration is the caller's: `SMS_ENV` and `SLACK_ENV` are the usual live channels.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { connectChannels } from '../../src/channels/connect.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { answerLinker } from '../../src/core/answer-token.js';
import { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import type { PipelineDeps } from '../../src/notification/send-deps.js';
import { createCapGate } from '../../src/policy/caps.js';
import { createRateGate } from '../../src/policy/rate-limit.js';
import type { Posted, Provider, ProviderReceipt } from '../../src/providers/types.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';

/** A live SMS channel (Twilio credentials that reach no one: the fake provider stands in) allowing +1415…. */
export const SMS_ENV: Readonly<Record<string, string>> = {
  TWILIO_ACCOUNT_SID: 'AC0',
  TWILIO_AUTH_TOKEN: 'secret',
  TWILIO_FROM: '+14155550000',
  NOTIFY_SMS_ALLOW: '+1415',
};

/** A live Slack channel allowing every conversation. */
export const SLACK_ENV: Readonly<Record<string, string>> = { SLACK_BOT_TOKEN: 'xoxb-1', NOTIFY_SLACK_ALLOW: '*' };

/**
 * A provider that records every payload it is handed and answers `fake-<n>` (or `receipt(n)`).
 * `hold`: each send waits for it after recording the payload; `failWith`: each send then throws it.
 */
export class FakeProvider implements Provider<unknown> {
  payloads: unknown[] = [];
  failWith?: Error;
  hold?: Promise<void>;

  constructor(
    readonly name = 'fake',
    private readonly receipt: (n: number) => ProviderReceipt = (n) => ({ providerMessageId: `fake-${n}` }),
  ) {}

  async send(payload: unknown): Promise<ProviderReceipt> {
    this.payloads.push(payload);
    if (this.hold) await this.hold;
    if (this.failWith) throw this.failWith;
    return this.receipt(this.payloads.length);
  }
}

/**
 * A provider that can also change and take back what it took, as Slack's chat.update and
 * chat.delete do; it records each call, and `amendFailWith` makes both throw.
 */
export class FakeSlack extends FakeProvider {
  edits: Array<{ posted: Posted<unknown>; next: unknown }> = [];
  retracts: Posted<unknown>[] = [];
  amendFailWith?: Error;

  constructor(receipt: (n: number) => ProviderReceipt = (n) => ({ providerMessageId: `1712345678.00010${n}`, conversation: 'C0123ABCD' })) {
    super('slack', receipt);
  }

  async edit(posted: Posted<unknown>, next: unknown): Promise<void> {
    if (this.amendFailWith) throw this.amendFailWith;
    this.edits.push({ posted, next });
  }

  async retract(posted: Posted<unknown>): Promise<void> {
    if (this.amendFailWith) throw this.amendFailWith;
    this.retracts.push(posted);
  }
}

/** A real SQLite store in a new temporary directory. */
export function openTempStore(prefix: string): Promise<SqliteStore> {
  return openSqliteStore({ file: join(mkdtempSync(join(tmpdir(), `${prefix}-`)), 'notify.db'), log: silentLogger });
}

export interface KitOptions {
  store: Store;
  /** Replacements by channel name (`{ sms }`); a configured channel without one gets its real provider. */
  providers: Readonly<Record<string, Provider<unknown>>>;
  /** The configuration's variables, over NOTIFY_DATA_DIR=/unused. */
  env?: Readonly<Record<string, string>>;
  /** The clock; Date.now unless given. */
  now?: () => number;
  /** Charge NOTIFY_RATE_LIMITS (a rate gate on the store). */
  rateGate?: boolean;
  /** Charge NOTIFY_CAPS (a cap gate on the store). */
  capGate?: boolean;
}

/** The deps a use case takes: the configuration from `env`, the channels connected with the fakes, a silent log. */
export async function pipelineDeps(opts: KitOptions): Promise<PipelineDeps & { config: Config }> {
  const config = loadConfig({ NOTIFY_DATA_DIR: '/unused', ...opts.env });
  // As app.ts does: with NOTIFY_PUBLIC_URL, the store's answer key makes the links of calls that ask.
  const answerKey = config.publicUrl ? await opts.store.answerKey(randomBytes(32).toString('base64url')) : undefined;
  const links = config.publicUrl && answerKey ? answerLinker(config.publicUrl, answerKey) : undefined;
  return {
    config,
    store: opts.store,
    ...(answerKey ? { answerKey } : {}),
    channels: await connectChannels(config, silentLogger, opts.providers, links),
    log: silentLogger,
    now: opts.now ?? Date.now,
    ...(opts.rateGate ? { rateGate: createRateGate(config.rateLimits, opts.store) } : {}),
    ...(opts.capGate ? { capGate: createCapGate(config.caps, opts.store) } : {}),
  };
}

/** The NotifyError `p` rejects with; fails the test when it resolves or rejects with anything else. */
export async function failure(p: Promise<unknown>): Promise<NotifyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotifyError);
  return err as NotifyError;
}
