/**
 * Block Kit for notifications: the layout blocks that need nothing back from Slack. An
 * interactive block (actions, input, a button in a section's accessory…) is refused with
 * advice: clicks go to the app's request URL, where this server takes only the buttons it
 * adds to a question itself (`ask`, ./answer-buttons.ts). Broadcast mentions are made inert inside blocks as in text (./mentions.ts).
 */
import { z } from 'zod';
import { neutraliseBroadcasts } from './mentions.js';

export const BLOCK_TYPES = ['header', 'section', 'divider', 'context', 'rich_text'] as const;
export const MAX_BLOCKS = 50;
/** Elements that make a block interactive, wherever they sit in it. */
const INTERACTIVE = new Set([
  'button',
  'static_select',
  'external_select',
  'users_select',
  'conversations_select',
  'channels_select',
  'overflow',
  'datepicker',
  'timepicker',
  'datetimepicker',
  'checkboxes',
  'radio_buttons',
  'plain_text_input',
  'multi_static_select',
  'multi_users_select',
  'multi_conversations_select',
  'multi_channels_select',
  'multi_external_select',
  'workflow_button',
]);

const WORD_JOINER = '\u2060';

function interactiveIn(node: unknown, depth = 0): string | undefined {
  if (depth > 32 || node === null || typeof node !== 'object') return undefined;
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = interactiveIn(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const type = (node as { type?: unknown }).type;
  if (typeof type === 'string' && INTERACTIVE.has(type)) return type;
  for (const v of Object.values(node)) {
    const found = interactiveIn(v, depth + 1);
    if (found) return found;
  }
  return undefined;
}

export const blocksField = z
  .array(z.looseObject({ type: z.string().meta({ enum: [...BLOCK_TYPES] }) }))
  .max(MAX_BLOCKS)
  .superRefine((blocks, ctx) => {
    blocks.forEach((block, i) => {
      if (!(BLOCK_TYPES as readonly string[]).includes(block.type)) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'type'],
          message: `Fix {field}: use ${BLOCK_TYPES.join(', ')}; ${JSON.stringify(block.type.slice(0, 40))} is not one (interactive blocks need a request URL this server does not have; put a link in a section instead).`,
          params: { code: 'INVALID_FIELD' },
        });
        return;
      }
      const interactive = interactiveIn(block);
      if (interactive) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `Fix {field}: it holds a ${interactive}, and interactive elements need a request URL this server does not have; put a link in the text instead.`,
          params: { code: 'INVALID_FIELD' },
        });
      }
    });
  });

export interface NeutralisedBlocks {
  blocks: unknown[];
  /** How many broadcast mentions were made inert. */
  count: number;
}

/**
 * The blocks as they are posted without the operator's consent to broadcasts: every string
 * screened as text is (mrkdwn carries `<!here>`), and rich_text's `broadcast` and `usergroup`
 * elements, which page by themselves, become the same inert text.
 */
export function neutraliseBlocks(blocks: readonly unknown[]): NeutralisedBlocks {
  let count = 0;
  const walk = (node: unknown, depth: number): unknown => {
    if (typeof node === 'string') {
      const n = neutraliseBroadcasts(node);
      count += n.count;
      return n.text;
    }
    if (node === null || typeof node !== 'object' || depth > 64) return node;
    if (Array.isArray(node)) return node.map((v) => walk(v, depth + 1));
    const o = node as Record<string, unknown>;
    if (o.type === 'broadcast' || o.type === 'usergroup') {
      count += 1;
      const name = o.type === 'broadcast' ? String(o.range ?? 'here') : 'group';
      return { type: 'text', text: `@${WORD_JOINER}${name}` };
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, walk(v, depth + 1)]));
  };
  return { blocks: blocks.map((b) => walk(b, 0)), count };
}

/**
 * What blocks show and link to, one line a piece, in order: every text, link, image and
 * mention (a `broadcast` element pages a channel). What a person approving the post must read.
 */
export function blocksText(blocks: readonly unknown[]): string[] {
  const out: string[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (node === null || typeof node !== 'object' || depth > 64) return;
    if (Array.isArray(node)) return node.forEach((v) => walk(v, depth + 1));
    const o = node as Record<string, unknown>;
    if (o.type === 'broadcast') out.push(`@${String(o.range ?? 'here')} (broadcast)`);
    if (o.type === 'user' || o.type === 'usergroup' || o.type === 'channel')
      out.push(`@${String(o.user_id ?? o.usergroup_id ?? o.channel_id ?? '')} (${o.type})`);
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === 'string' && (k === 'text' || k === 'alt_text')) {
        out.push(v);
        // mrkdwn shows a link's label, not where it goes.
        for (const m of v.matchAll(/<((?:https?|mailto):[^|>]*)\|([^>]*)>/g)) out.push(`link: ${m[1]!} (shown as "${m[2]!}")`);
      } else if (typeof v === 'string' && (k === 'url' || k === 'image_url')) out.push(`link: ${v}`);
      else walk(v, depth + 1);
    }
  };
  walk(blocks, 0);
  return out;
}
