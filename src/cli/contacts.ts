/**
 * `notify-mcp contacts`: the recipients a person approved a first contact with (NOTIFY_APPROVAL
 * rule `first-contact`), one per line; `notify-mcp contacts forget <channel> <recipient>` makes
 * the next send to it a first contact again. Reads the same store as the server.
 */
import type { Config } from '../config/config.js';
import { ConfigError } from '../core/env.js';
import type { Logger } from '../core/log.js';
import { openStore } from '../store/index.js';

export async function contactsCommand(args: readonly string[], config: Config, log: Logger, out: (line: string) => void): Promise<number> {
  const [action, via, recipient, ...rest] = args;
  if (action !== undefined && (action !== 'forget' || !via || !recipient || rest.length > 0)) {
    throw new ConfigError(
      'use `notify-mcp contacts` to list, or `notify-mcp contacts forget <channel> <recipient>` (e.g. contacts forget sms +14155550123)',
    );
  }
  if (via !== undefined && !config.channels.some((c) => c.name === via)) {
    throw new ConfigError(`"${via}" is not a channel; use one of ${config.channels.map((c) => c.name).join(', ')}`);
  }
  const store = await openStore(config, log);
  try {
    if (action === 'forget') {
      const forgotten = await store.forgetContact(via!, recipient!);
      out(forgotten ? `forgot ${via} ${recipient}: its next send asks for approval again` : `${via} ${recipient} was not a known contact`);
      return forgotten ? 0 : 1;
    }
    const contacts = await store.listContacts();
    for (const c of contacts) out([c.via, c.recipient, new Date(c.approved_at).toISOString(), c.client ?? '-'].join('\t'));
    if (contacts.length === 0) out('no approved contacts');
    return 0;
  } finally {
    await store.close();
  }
}
