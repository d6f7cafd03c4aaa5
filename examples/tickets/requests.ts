/** The HTTP request each tracker's API would get for a ticket: what the dry run answers. */
import type { Ticket } from './union.js';

export interface TrackerRequest {
  method: 'POST';
  url: string;
  body: unknown;
}

export function requestFor(t: Ticket): TrackerRequest {
  switch (t.tracker) {
    case 'jira':
      return {
        method: 'POST',
        url: 'https://your-site.atlassian.net/rest/api/3/issue',
        body: {
          fields: {
            project: { key: t.project },
            summary: t.summary,
            issuetype: { name: t.issue_type ?? 'Task' },
            ...(t.description ? { description: t.description } : {}),
            ...(t.labels ? { labels: t.labels } : {}),
            ...t.fields,
          },
        },
      };
    case 'linear':
      return {
        method: 'POST',
        url: 'https://api.linear.app/graphql',
        body: {
          query: 'mutation IssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { issue { id } } }',
          variables: { input: { teamKey: t.team, title: t.title, description: t.description, priority: t.priority, estimate: t.estimate } },
        },
      };
    case 'github':
      return {
        method: 'POST',
        url: `https://api.github.com/repos/${t.repo}/issues`,
        body: { title: t.title, body: t.body, labels: t.labels, assignees: t.assignees },
      };
  }
}
