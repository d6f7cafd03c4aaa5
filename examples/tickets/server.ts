#!/usr/bin/env node
/**
 * An MCP server over stdio with one polymorphic tool, create_ticket (dry run), served in any
 * profile of the union library: `node examples/dist/tickets/server.js --profile nested`.
 * The low-level SDK Server is used because the tool list is generated, and every call is
 * validated branch-first by the union, whatever the profile.
 */
import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { profileTools, unionProfiles, validateUnionCall, type UnionProfile } from '@notify-mcp/union';
import { requestFor } from './requests.js';
import { ticketDef, type Ticket } from './union.js';

function profileArg(argv: string[]): UnionProfile {
  const i = argv.indexOf('--profile');
  const wanted = i >= 0 ? argv[i + 1] : 'flat';
  const known = unionProfiles(ticketDef);
  const found = known.find((p) => p === wanted);
  if (!found) {
    process.stderr.write(`--profile must be one of ${known.join(', ')}\n`);
    process.exit(2);
  }
  return found;
}

const profile = profileArg(process.argv.slice(2));
const tools = profileTools(ticketDef, profile);

const server = new Server({ name: 'tickets-example', version: '1.0.0' }, { capabilities: { tools: {} } });

server.setRequestHandler('tools/list', async () => ({
  tools: tools.map(({ name, title, description, inputSchema }) => ({ name, title, description, inputSchema: inputSchema as { type: 'object' } })),
}));

server.setRequestHandler('tools/call', async (request): Promise<CallToolResult> => {
  const tool = tools.find((t) => t.name === request.params.name);
  if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool "${request.params.name}"; this server has ${tools.map((t) => t.name).join(', ')}.`);
  const checked = validateUnionCall(ticketDef, tool.binding, request.params.arguments);
  if (!checked.ok) {
    const [first] = checked.issues;
    const structured = { error: first, issues: checked.issues, issues_omitted: checked.omitted };
    return { isError: true, content: [{ type: 'text', text: `${first.message}\n${JSON.stringify(structured)}` }], structuredContent: structured };
  }
  const result = { tracker: checked.variant, status: 'dry_run', request: requestFor(checked.value as Ticket) };
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
});

await server.connect(new StdioServerTransport());
