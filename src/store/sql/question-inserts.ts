/**
 * The writes of a question and its token hashes, shared by the answers port (./answers.ts)
 * and an escalation's steps (./escalations.ts), which keep their tokens in their own transaction.
 */
import { statement } from './dialect.js';

/** A second question for the same notification changes nothing. RETURNING: run in a transaction of several (each statement read as rows). */
export const INSERT_QUESTION = statement(
  'insert-question',
  'INSERT INTO questions (notification_id, prompt, choices, expires_in_s, created_at, client) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (notification_id) DO NOTHING RETURNING notification_id',
);

export const INSERT_TOKEN = statement(
  'insert-question-token',
  'INSERT INTO question_tokens (sha256, notification_id, recipient, sent_in) VALUES ($1, $2, $3, $4) ON CONFLICT (sha256) DO NOTHING RETURNING sha256',
);
