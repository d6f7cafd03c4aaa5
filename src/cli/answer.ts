/**
 * `notify-mcp answer <id> <choice>`: answers a dry-run question from the shell, so the whole
 * loop (ask, answer, get_notification) can be tried without a provider. A question whose
 * message really left is refused: its recipients answer it, through its links.
 */
import type { Config } from '../config/config.js';
import { ConfigError } from '../core/env.js';
import type { Logger } from '../core/log.js';
import { answerQuestion, type AnswerResult } from '../notification/answer.js';
import { openStore } from '../store/index.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The result in one line, and whether it is a success. */
function said(r: AnswerResult, id: string): { line: string; ok: boolean } {
  switch (r.kind) {
    case 'recorded':
      return { line: `recorded ${r.id}: ${r.answer.choice} (by ${r.answer.by}, via ${r.answer.via}, at ${iso(r.answer.at)})`, ok: true };
    case 'answered':
      return { line: `not recorded: ${r.id} was already answered ${r.answer.choice} by ${r.answer.by} at ${iso(r.answer.at)}`, ok: false };
    case 'expired':
      return { line: `not recorded: ${r.id}'s question expired at ${iso(r.expires_at)}`, ok: false };
    case 'not_offered':
      return { line: `not recorded: choose one of ${r.choices.map((c) => JSON.stringify(c)).join(', ')}`, ok: false };
    case 'not_sent':
      return {
        line: `not recorded: ${r.id} has not been sent yet (scheduled, held or awaiting approval) or will not be (declined, cancelled, taken back)`,
        ok: false,
      };
    case 'live':
      return { line: `not recorded: ${r.id} was really sent; only a dry-run question is answered from the shell`, ok: false };
    case 'unknown':
      return { line: `not recorded: ${id} asked no question in this store`, ok: false };
  }
}

export async function answerCommand(args: readonly string[], config: Config, log: Logger, out: (line: string) => void): Promise<number> {
  const [id, choice, ...rest] = args;
  if (!id || choice === undefined || rest.length > 0) {
    throw new ConfigError('use `notify-mcp answer <id> <choice>` (e.g. notify-mcp answer ntf_0123… Yes; quote a choice with spaces)');
  }
  const store = await openStore(config, log, { existing: true });
  try {
    const { line, ok } = said(await answerQuestion({ store, now: Date.now }, { id }, choice, 'cli', undefined, 'dry_run'), id);
    out(line);
    return ok ? 0 : 1;
  } finally {
    await store.close();
  }
}
