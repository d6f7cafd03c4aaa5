/**
 * create_ticket: one tool over three issue trackers, as a tagged union on `tracker`. Built only
 * on the union package (`@notify-mcp/union`): everything a client sees (every
 * profile's schema, the descriptions, the errors) is generated from this definition.
 */
import { z } from 'zod';
import { defineUnion } from '@notify-mcp/union';

const jira = z
  .object({
    tracker: z.literal('jira'),
    project: z.string().regex(/^[A-Z][A-Z0-9]{1,9}$/).meta({ description: 'project key', examples: ['OPS'] }),
    summary: z.string().min(1).max(255),
    description: z.string().max(32_767).optional(),
    issue_type: z.enum(['Bug', 'Task', 'Story']).optional().describe('default Task'),
    labels: z.array(z.string().regex(/^\S+$/).max(255)).max(10).optional().describe('labels without spaces'),
    fields: z.record(z.string(), z.unknown()).optional().describe('custom fields by id, such as customfield_10010'),
  })
  .meta({ description: 'Creates a Jira Cloud issue.' });

const linear = z
  .object({
    tracker: z.literal('linear'),
    team: z.string().regex(/^[A-Z]{2,5}$/).meta({ description: 'team key', examples: ['ENG'] }),
    title: z.string().min(1).max(255),
    description: z.string().max(100_000).optional().describe('Markdown'),
    priority: z.int().min(0).max(4).optional().describe('0 none, 1 urgent, 4 low'),
    estimate: z.number().min(0).max(64).optional().describe('points'),
  })
  .meta({ description: 'Creates a Linear issue.' });

const github = z
  .object({
    tracker: z.literal('github'),
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/).meta({ description: 'owner/name', examples: ['octo-org/app'] }),
    title: z.string().min(1).max(256),
    body: z.string().max(65_536).optional().describe('Markdown'),
    labels: z.array(z.string().min(1).max(50)).max(20).optional(),
    assignees: z.array(z.string().regex(/^[A-Za-z0-9-]{1,39}$/)).max(10).optional().describe('GitHub logins'),
  })
  .meta({ description: 'Opens a GitHub issue.' });

export const ticket = z.discriminatedUnion('tracker', [jira, linear, github]);
export type Ticket = z.output<typeof ticket>;

export const ticketDef = defineUnion(ticket, {
  toolName: 'create_ticket',
  title: 'Create ticket',
  intro: 'Creates one ticket in Jira, Linear or GitHub Issues.',
  outro: 'Dry run: nothing is created; the answer is the request the tracker API would get.',
  variantNoun: 'tracker',
  variantToolName: (tracker) => `create_${tracker}_ticket`,
  nestedKey: 'ticket',
});
