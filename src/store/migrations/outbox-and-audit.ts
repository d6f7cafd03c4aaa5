/**
 * Schema steps 13 to 25: the outbox, send caps, the audit chain, and what came after
 * (../migrations.ts: released steps are never edited).
 */
import { GENESIS } from '../audit.js';
import type { Migration } from './migration.js';

export const OUTBOX_AND_AUDIT: readonly Migration[] = [
  {
    version: 13,
    name: 'the outbox: sends waiting for their time (send_at, quiet hours), released once',
    // A waiting send lives here, never only in a timer: whichever process sharing the store
    // claims it once due releases it (src/notification/outbox.ts). `state` moves through
    // src/notification/status.ts's table; `owner`/`claimed_at` fence a release, and a
    // release left by a dead process is taken again after its lease. `idem_key` makes a
    // keyed scheduling replay. Calls and outcomes are JSON text on both engines.
    sqlite: `
      CREATE TABLE outbox (
        id TEXT PRIMARY KEY,
        via TEXT NOT NULL,
        client TEXT,
        call TEXT NOT NULL,
        state TEXT NOT NULL,
        send_at INTEGER,
        due_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        owner TEXT,
        claimed_at INTEGER,
        finished_at INTEGER,
        outcome TEXT,
        idem_key TEXT UNIQUE,
        payload_hash TEXT
      );
      CREATE INDEX outbox_due ON outbox (state, due_at);
    `,
    postgres: `
      CREATE TABLE outbox (
        id TEXT PRIMARY KEY,
        via TEXT NOT NULL,
        client TEXT,
        call TEXT NOT NULL,
        state TEXT NOT NULL,
        send_at BIGINT,
        due_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        owner TEXT,
        claimed_at BIGINT,
        finished_at BIGINT,
        outcome TEXT,
        idem_key TEXT UNIQUE,
        payload_hash TEXT
      );
      CREATE INDEX outbox_due ON outbox (state, due_at);
    `,
  },
  {
    version: 14,
    name: 'send caps: what each client has used of each cap in its current period',
    // One row per (client, measure, period) counter; `resets_at` ends the fixed period (the
    // hour or the UTC day), after which the next send starts it again from zero.
    sqlite: `CREATE TABLE cap_counters (key TEXT PRIMARY KEY, used INTEGER NOT NULL, resets_at INTEGER NOT NULL);`,
    postgres: `CREATE TABLE cap_counters (key TEXT PRIMARY KEY, used BIGINT NOT NULL, resets_at BIGINT NOT NULL);`,
  },
  {
    version: 15,
    name: 'the hash-chained audit log and its head',
    // One chain per store: each entry's prev is the hash of the one before, and audit_head
    // holds the last entry (seq, hash) and the anchor the chain starts from (moved by pruning
    // to the last pruned entry). Appends lock the head row, so replicas never fork the chain.
    sqlite: `
      CREATE TABLE audit_log (
        seq INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        client TEXT,
        tool TEXT,
        notification_id TEXT,
        kind TEXT NOT NULL,
        digest TEXT NOT NULL,
        recipients TEXT,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX audit_log_at ON audit_log (at);
      CREATE INDEX audit_log_notification ON audit_log (notification_id);
      CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL, anchor_seq INTEGER NOT NULL, anchor_hash TEXT NOT NULL);
      INSERT INTO audit_head (id, seq, hash, anchor_seq, anchor_hash) VALUES (1, 0, '${GENESIS}', 0, '${GENESIS}');
    `,
    postgres: `
      CREATE TABLE audit_log (
        seq BIGINT PRIMARY KEY,
        at BIGINT NOT NULL,
        client TEXT,
        tool TEXT,
        notification_id TEXT,
        kind TEXT NOT NULL,
        digest TEXT NOT NULL,
        recipients TEXT,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX audit_log_at ON audit_log (at);
      CREATE INDEX audit_log_notification ON audit_log (notification_id);
      CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq BIGINT NOT NULL, hash TEXT NOT NULL, anchor_seq BIGINT NOT NULL, anchor_hash TEXT NOT NULL);
      INSERT INTO audit_head (id, seq, hash, anchor_seq, anchor_hash) VALUES (1, 0, '${GENESIS}', 0, '${GENESIS}');
    `,
  },
  {
    version: 20,
    name: 'the conversation a provider put a message in',
    // Slack answers chat.postMessage with the channel ID, and changes or deletes a message
    // only by that ID: a post to #name or to a user's DM is edited through it. NULL for
    // other channels and for rows written before this version.
    sqlite: `ALTER TABLE deliveries ADD COLUMN provider_conversation TEXT;`,
    postgres: `ALTER TABLE deliveries ADD COLUMN provider_conversation TEXT;`,
  },
  {
    version: 21,
    name: 'audit log without its time index (SQLite)',
    // No SQLite plan used it: every read by time walks the rowid (seq), the filters'
    // `? IS NULL OR at >= ?` form keeps SQLite off a column's index, and it was one more page
    // in every audited commit. PostgreSQL plans with the parameters' values: kept there.
    sqlite: `DROP INDEX audit_log_at;`,
    postgres: `SELECT 1;`,
  },
  {
    version: 22,
    name: 'when a release first met a congested provider',
    // A release that meets rate limits or a busy provider waits again with backoff until
    // this time plus the grace; NULL while it has not.
    sqlite: `ALTER TABLE outbox ADD COLUMN congested_since INTEGER;`,
    postgres: `ALTER TABLE outbox ADD COLUMN congested_since BIGINT;`,
  },
  {
    version: 23,
    name: 'console sessions signed out',
    // A signed-out console session's id, kept until its cookie would have expired anyway, so
    // every replica refuses the cookie at once.
    sqlite: `CREATE TABLE console_revocations (session TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);`,
    postgres: `CREATE TABLE console_revocations (session TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);`,
  },
  {
    version: 24,
    name: "answers: a send's question, its token hashes, the first answer, and the store's answer key",
    // One question per notification; the answer columns stay NULL until the first answer,
    // which a conditional UPDATE writes once (src/store/sql/answers.ts). Tokens are kept
    // only as their SHA-256. answer_key holds one row: the first process to start writes
    // it, every replica reads the same, so links derive alike everywhere.
    sqlite: `
      CREATE TABLE questions (
        notification_id TEXT PRIMARY KEY,
        prompt TEXT NOT NULL,
        choices TEXT NOT NULL,
        expires_in_s INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        client TEXT,
        answer_choice TEXT,
        answer_by TEXT,
        answer_via TEXT,
        answered_at INTEGER
      );
      CREATE TABLE question_tokens (sha256 TEXT PRIMARY KEY, notification_id TEXT NOT NULL, recipient TEXT NOT NULL);
      CREATE TABLE answer_key (id INTEGER PRIMARY KEY CHECK (id = 1), key TEXT NOT NULL);
    `,
    postgres: `
      CREATE TABLE questions (
        notification_id TEXT PRIMARY KEY,
        prompt TEXT NOT NULL,
        choices TEXT NOT NULL,
        expires_in_s BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        client TEXT,
        answer_choice TEXT,
        answer_by TEXT,
        answer_via TEXT,
        answered_at BIGINT
      );
      CREATE TABLE question_tokens (sha256 TEXT PRIMARY KEY, notification_id TEXT NOT NULL, recipient TEXT NOT NULL);
      CREATE TABLE answer_key (id INTEGER PRIMARY KEY CHECK (id = 1), key TEXT NOT NULL);
    `,
  },
  {
    version: 25,
    name: 'answers: question tokens by recipient, for an SMS reply to find what its number was asked',
    sqlite: `CREATE INDEX question_tokens_recipient ON question_tokens (recipient);`,
    postgres: `CREATE INDEX question_tokens_recipient ON question_tokens (recipient);`,
  },
  {
    version: 26,
    name: 'escalation steps: the send an outbox entry escalates',
    // A step of an escalation (DESIGN section 11) waits in the outbox like a scheduled send;
    // `escalates` names the first send, whose question's answer cancels it (in the answer's
    // transaction) and which its claim reads in the claim's own statement.
    sqlite: `
      ALTER TABLE outbox ADD COLUMN escalates TEXT;
      CREATE INDEX outbox_escalates ON outbox (escalates) WHERE escalates IS NOT NULL;
    `,
    postgres: `
      ALTER TABLE outbox ADD COLUMN escalates TEXT;
      CREATE INDEX outbox_escalates ON outbox (escalates) WHERE escalates IS NOT NULL;
    `,
  },
  {
    version: 27,
    name: 'answers: the message a token went in, and the message that took the answer',
    // A question's tokens may go in several messages (an escalation's steps): `sent_in` names
    // the step a token went in (NULL: the question's own message), so a step's link and an SMS
    // reply to a step's number find the question and say which step; `answer_in` keeps which
    // step took the answer. Step links kept before this version named the step as `recipient`.
    sqlite: `
      ALTER TABLE question_tokens ADD COLUMN sent_in TEXT;
      ALTER TABLE questions ADD COLUMN answer_in TEXT;
      UPDATE question_tokens SET sent_in = recipient, recipient = ''
        WHERE length(recipient) = 36 AND substr(recipient, 1, 4) = 'ntf_' AND NOT substr(recipient, 5) GLOB '*[^0-9a-f]*';
    `,
    postgres: `
      ALTER TABLE question_tokens ADD COLUMN sent_in TEXT;
      ALTER TABLE questions ADD COLUMN answer_in TEXT;
      UPDATE question_tokens SET sent_in = recipient, recipient = '' WHERE recipient ~ '^ntf_[0-9a-f]{32}$';
    `,
  },
];
