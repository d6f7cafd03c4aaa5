/**
 * edit_notification meets the approval rules a send meets (the reliability issue's second
 * class): a posted Slack message edited to a broadcast (`<!channel>` in text, or a rich_text
 * `broadcast` element) under NOTIFY_APPROVAL=broadcast is asked in ask mode, refused with
 * APPROVAL_REQUIRED where no one can be asked now (console mode, or a client that cannot
 * ask), and reaches chat.update only with a person's answer bound to that exact payload.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlack, openTempStore, pipelineDeps } from '../../../test/helpers/pipeline-kit.js';
import { NotifyError } from '../../core/errors.js';
import { silentLogger } from '../../core/log.js';
import type { ApprovalRound } from '../../notification/approval.js';
import { sendNotification } from '../../notification/pipeline.js';
import type { SqliteStore } from '../../store/sqlite/store.js';
import { AskFirst, type ToolContext } from '../tool-kit.js';
import { editNotificationTool } from './edit-notification.js';

let store: SqliteStore;
let slack: FakeSlack;
beforeEach(async () => {
  store = await openTempStore('edit');
  slack = new FakeSlack(() => ({ providerMessageId: '1712345678.000100', conversation: 'C0123ABCD' }));
});
afterEach(async () => store.close());

async function setup(mode: string) {
  const deps = await pipelineDeps({
    store,
    providers: { slack },
    env: {
      SLACK_BOT_TOKEN: 'xoxb-test',
      NOTIFY_SLACK_ALLOW: 'C0123ABCD',
      NOTIFY_SLACK_ALLOW_BROADCAST: '1',
      NOTIFY_APPROVAL: 'broadcast',
      NOTIFY_APPROVAL_MODE: mode,
    },
  });
  const config = deps.config;
  const posted = await sendNotification(
    deps,
    'slack',
    { via: 'slack', channel: 'C0123ABCD', text: 'Deploy 142 is done.' },
    { client: 'bot' },
  );
  expect(posted.status).toBe('sent');
  const tool = editNotificationTool([]);
  const edit = (args: { text: string; blocks?: unknown[] }, round?: ApprovalRound) => {
    const ctx = {
      store,
      config,
      log: silentLogger,
      client: 'bot',
      now: Date.now,
      signal: new AbortController().signal,
      deps,
      ...(round ? { approval: { round, ask: async () => ({ content: [] }) } } : {}),
    };
    return tool.handler({ id: posted.id, ...args } as never, ctx as unknown as ToolContext);
  };
  return { id: posted.id, edit };
}

const BROADCASTS = [
  { text: '<!channel> deploy 142 rolled back' },
  {
    text: 'deploy 142 rolled back',
    blocks: [
      {
        type: 'rich_text',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'broadcast', range: 'channel' },
              { type: 'text', text: ' rolled back' },
            ],
          },
        ],
      },
    ],
  },
];

describe('an edit meets the approval rules of a send', () => {
  for (const mode of ['console', 'ask']) {
    for (const change of BROADCASTS) {
      it(`${mode}: an edit to a broadcast (${change.blocks ? 'rich_text element' : 'text'}) reaches chat.update only with a person's answer to that payload`, async () => {
        const { edit } = await setup(mode);
        const refused = await edit(change, { canAsk: false }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(NotifyError);
        expect((refused as NotifyError).code).toBe('APPROVAL_REQUIRED');
        expect(slack.edits).toEqual([]);
        if (mode === 'console') {
          // The console cannot hold an edit of a posted message, whoever calls.
          expect(((await edit(change, { canAsk: true }).catch((e: unknown) => e)) as NotifyError).code).toBe('APPROVAL_REQUIRED');
          expect(slack.edits).toEqual([]);
          return;
        }
        const asked = await edit(change, { canAsk: true });
        if (!(asked instanceof AskFirst)) throw new Error('not asked');
        const { grant } = asked.request;
        expect(asked.request.message).toContain('edit of');
        const declined = await edit(change, { canAsk: true, previous: { grant, answer: 'decline' } }).catch((e: unknown) => e);
        expect((declined as NotifyError).code).toBe('APPROVAL_DECLINED');
        // An answer about another payload approves nothing.
        const other = await edit({ text: '<!here> something else' }, { canAsk: true, previous: { grant, answer: 'accept' } });
        expect(other).toBeInstanceOf(AskFirst);
        expect(slack.edits).toEqual([]);
        expect(await edit(change, { canAsk: true, previous: { grant, answer: 'accept' } })).toMatchObject({ status: 'sent' });
        expect(slack.edits).toHaveLength(1);
      });
    }
  }

  it('an edit no rule would hold goes through as before', async () => {
    const { edit } = await setup('console');
    expect(await edit({ text: 'Deploy 142 is done, all green.' }, { canAsk: false })).toMatchObject({ status: 'sent' });
    expect(slack.edits).toMatchObject([
      { posted: { providerMessageId: '1712345678.000100' }, next: { channel: 'C0123ABCD', text: 'Deploy 142 is done, all green.' } },
    ]);
  });
});
