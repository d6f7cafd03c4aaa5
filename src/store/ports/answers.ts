/**
 * The answers port (DESIGN section 11): a send's question, the hashes of its answer tokens,
 * the first answer, and the store's answer key. A token itself is never stored.
 */

/** A person's answer: the choice, who gave it (`link`, a Slack user ID, a phone number), through what, and when. */
export interface QuestionAnswer {
  choice: string;
  by: string;
  via: string;
  at: number;
  /** The escalation step whose message took it (its link, button or reply), when not the question's own. */
  step?: string;
}

export interface QuestionRecord {
  notification_id: string;
  /** What the answer page shows of the message: its subject or first line. */
  prompt: string;
  choices: readonly string[];
  expires_in_s: number;
  created_at: number;
  /** The sender's client, for the answer's audit entry. */
  client: string | null;
  answer: QuestionAnswer | null;
  /** Read by a token or a recipient: the message it went in, when not the question's own (an escalation step's id). */
  sent_in?: string;
}

/**
 * One answer token, as kept: its SHA-256 (hex), the recipient it was made for (`''`: the whole
 * message), and the message it went in when not the question's own (an escalation step).
 */
export interface QuestionToken {
  sha256: string;
  recipient: string;
  sent_in?: string;
}

/** What a write of an answer did: recorded, or an earlier answer stood (it is returned). */
export type AnswerWrite =
  /** `cancelled`: the escalation steps this answer cancelled, in its transaction (present when any). */
  { kind: 'recorded'; cancelled?: string[] } | { kind: 'answered'; answer: QuestionAnswer };

export interface AnswersPort {
  /**
   * The store's answer key: `candidate` is kept if the store has none yet, then the kept key
   * is returned, so every process and replica of one store derives the same tokens.
   */
  answerKey(candidate: string): Promise<string>;
  /** Keeps a send's question and its token hashes; a second call for the same notification changes nothing. */
  recordQuestion(q: Omit<QuestionRecord, 'answer'>, tokens: readonly QuestionToken[]): Promise<void>;
  getQuestion(notificationId: string): Promise<QuestionRecord | null>;
  /** The question a token hash belongs to. */
  questionByToken(sha256: string): Promise<QuestionRecord | null>;
  /**
   * The unanswered questions with a token made for `recipient` (an SMS number: its reply
   * answers one of them), newest first, at most `limit`; each once per message that went to it.
   */
  unansweredQuestionsTo(recipient: string, limit: number): Promise<QuestionRecord[]>;
  /** Of `ids`, the questions answered (one read, for every wait of a process at once). */
  answeredAmong(ids: readonly string[]): Promise<QuestionRecord[]>;
  /**
   * Unanswered questions whose life, counted from when they were asked, ends after `after`,
   * newest first: the console's open questions (it judges each, as the answer use case does).
   */
  openQuestions(after: number, limit: number): Promise<QuestionRecord[]>;
  /**
   * Writes the first answer, with its audit entry, in one transaction; a later one changes
   * nothing and gets the first. The same transaction cancels the escalation steps of the
   * notification still waiting (one a release claimed first is left to it).
   */
  answerQuestion(notificationId: string, answer: QuestionAnswer): Promise<AnswerWrite>;
}
