/**
 * createServer(app, connection, era): the MCP server of one serving unit (a stdio connection,
 * a 2025-11-25 HTTP session, or one 2026-07-28 HTTP request), on the v2 SDK's low-level Server
 * with our own tools/list and tools/call, because the list depends on the profile chosen per
 * request and calls are validated branch-first, neither of which McpServer.registerTool does.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolRequest,
  type CallToolResult,
  type ListToolsResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { registerBannerResources } from './resources.js';
import { STDIO_FEED_CLIENT } from '../banners/feed-client.js';
import { bannerHubFor } from '../banners/hub.js';
import { channelToolName, SEND_TOOL } from '../channels/send-union.js';
import type { Config, Profile, ToolGroup } from '../config/config.js';
import type { Logger } from '../core/log.js';
import type { CallObserver } from './metrics.js';
import type { AnswerWaits } from '../notification/answer-waits.js';
import type { PipelineDeps } from '../notification/pipeline.js';
import type { Store } from '../store/types.js';
import { APPROVAL_MAX_ROUNDS, APPROVAL_TTL_S, approvalRound, askApproval, OpenQuestions, type ApprovalState } from './approval-round.js';
import { errorResult } from './tool-result.js';
import { offeredCatalog, type Catalog, type ProfileCatalog } from './catalog.js';
import { callerDependentList, selectProfile } from './profile-choice.js';
import { callArguments } from './call-arguments.js';
import { bannerResourcesOffered, offeredGroups } from './tool-groups.js';
import { VERSION } from '../core/version.js';

/**
 * The long-lived parts of a running server that every connection shares (src/app.ts builds
 * it): configuration, store, providers and the tool catalog.
 */
export interface App extends PipelineDeps {
  config: Config;
  /** The whole store (the send use cases take only their ports of it). */
  store: Store;
  catalog: Catalog;
  /** Signs and verifies the approval state clients carry between rounds; one per process. */
  approvalCodec: RequestStateCodec<ApprovalState>;
  /** This process's waits for answers (get_notification's wait_s). */
  answerWaits: AnswerWaits;
  /** Runs a tool call so that close() waits for it. */
  track<T>(call: Promise<T>): Promise<T>;
  /** Resolves when no call is in flight, or after `timeoutMs`. */
  drain(timeoutMs?: number): Promise<void>;
  /** Waits for in-flight calls (bounded by the send budget), then closes providers and store. */
  close(): Promise<void>;
}

/** The protocol family a server instance speaks: 2025-era (`initialize`) or 2026-07-28. */
export type Era = 'legacy' | 'modern';

export interface Connection {
  /** Profile bound to the HTTP credential, if any. */
  credentialProfile?: Profile;
  /** Profile named by the HTTP endpoint (`/mcp/<profile>`), if any. */
  endpointProfile?: Profile;
  /** The authenticated client name (HTTP token); overrides clientInfo.name in records. */
  client?: string;
  /** Whose share of the live banner feed this connection's subscriptions take (feedClientKey); stdio's own when absent. */
  feedClient?: string;
  log?: Logger;
  observeCall?: CallObserver;
}

/**
 * What a client's model reads first; the send tools are named from the server's channels,
 * and only the groups the server offers (NOTIFY_TOOLS) are named. Server-wide, not per
 * token, so server/discover stays the same for every caller.
 */
const instructions = (channels: readonly { name: string }[], groups: readonly ToolGroup[]) =>
  [
    groups.includes('send') &&
      `Send notifications with ${SEND_TOOL} (or ${channels.map((c) => channelToolName(c.name)).join('/')}): pick the channel with via.`,
    'Failed calls return structuredContent.error with a code, a JSON Pointer path and a fix.',
    (groups.includes('status') || groups.includes('read-only')) &&
      'get_notification({ id }) shows where a sent notification stands (delivered, undelivered…).',
    groups.includes('banners')
      ? 'Use show_banner, list_banners and dismiss_banner for in-app banners.'
      : groups.includes('read-only') && 'list_banners lists the in-app banners.',
  ]
    .filter(Boolean)
    .join(' ');

/**
 * How long a 2026-07-28 client may reuse a tools/list: the list changes only when the
 * server restarts with another configuration, so minutes are safe and save a round trip
 * per turn for clients that cache.
 */
export const TOOLS_LIST_TTL_MS = 300_000;

const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';

/**
 * The client's self-reported name for this request. The SDK's published types reduce the
 * envelope to `{}`, hence the cast; on 2025-era instances the envelope is absent and the
 * handshake's clientInfo answers.
 */
function clientNameOf(server: Server, ctx: ServerContext): string | undefined {
  const envelope = ctx.mcpReq.envelope as { [CLIENT_INFO_KEY]?: { name?: unknown } } | undefined;
  const name = envelope?.[CLIENT_INFO_KEY]?.name;
  return typeof name === 'string' ? name : server.getClientVersion()?.name;
}

/** One count of open approval questions per app (a process may hold several apps: tests, embedders). */
const openQuestions = new WeakMap<App, OpenQuestions>();
function openQuestionsOf(app: App): OpenQuestions {
  let q = openQuestions.get(app);
  if (!q) openQuestions.set(app, (q = new OpenQuestions()));
  return q;
}

type OpenSession = ReturnType<OpenQuestions['session']>;

export function createServer(app: App, conn: Connection = {}, era: Era = 'legacy'): Server {
  // The token's groups, else the server's: a tool outside them is neither listed nor callable.
  const groups = offeredGroups(app.config, conn.client);
  const resources = bannerResourcesOffered(groups);
  const server = newServer(app, resources);
  // The profile is chosen per request: credential > endpoint > clientInfo.name (through the
  // opt-in NOTIFY_CLIENT_PROFILES) > default. clientInfo comes from the request's `_meta`
  // envelope under 2026-07-28 and from the `initialize` handshake under 2025-11-25.
  // Spelled out: a spread followed by a property takes V8's slow path, on every call.
  const profileFor = (clientName: string | undefined) =>
    selectProfile(app.config, { credentialProfile: conn.credentialProfile, endpointProfile: conn.endpointProfile, clientName });
  // A list is public only when no caller could have been given another one on this endpoint.
  const cacheScope = callerDependentList(app.config, conn) ? 'private' : 'public';
  const offered = (profile: Profile) => offeredCatalog(app.catalog[profile], groups);

  server.setRequestHandler('tools/list', async (_request, ctx): Promise<ListToolsResult> => {
    const tools = offered(profileFor(clientNameOf(server, ctx))).tools;
    return era === 'modern' ? { tools, ttlMs: TOOLS_LIST_TTL_MS, cacheScope } : { tools };
  });

  // A 2025-11-25 question holds its call open until answered: bounded per session and token client.
  const questions = era === 'legacy' ? openQuestionsOf(app).session() : undefined;
  server.setRequestHandler('tools/call', toolsCall({ app, conn, server, questions, profileFor, offered }));
  if (questions) {
    const previous = server.onclose;
    server.onclose = () => {
      questions.closeAll();
      previous?.();
    };
  }
  // Withheld with list_banners: no resources capability and no handler (method not found).
  if (resources)
    registerBannerResources(server, {
      store: app.store,
      now: app.now,
      hub: bannerHubFor(app.store, { log: app.log }),
      era,
      client: conn.feedClient ?? STDIO_FEED_CLIENT,
    });
  return server;
}

/** The SDK server with our capabilities, instructions and approval settings. */
function newServer(app: App, resources: boolean): Server {
  return new Server(
    { name: 'notify-mcp', title: 'notify-mcp', version: VERSION },
    {
      capabilities: resources
        ? { tools: { listChanged: false }, resources: { subscribe: true, listChanged: false } }
        : { tools: { listChanged: false } },
      instructions: instructions(app.channels, app.config.tools.groups),
      // server/discover says the same to every caller.
      cacheHints: { 'server/discover': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' } },
      // An approval's state comes back from the client: a forged or expired one is refused.
      requestState: { verify: (state, ctx) => app.approvalCodec.verify(state, ctx) },
      // A person answers at human pace; a round (2025-11-25 elicitation) waits up to the state's life.
      inputRequired: { roundTimeoutMs: APPROVAL_TTL_S * 1000, maxRounds: APPROVAL_MAX_ROUNDS },
    },
  );
}

/** The loggers a connection's calls write with, kept per tool, profile and client. */
function callLogs(base: Logger): (tool: string, profile: string, client: string | null) => Logger {
  // Built once per connection and caller, not per call; bounded, as clientInfo
  // names are the client's to choose.
  const logs = new Map<string, Logger>();
  return (tool, profile, client) => {
    const id = JSON.stringify([tool, profile, client]);
    let log = logs.get(id);
    if (!log) {
      log = base.child({ tool, profile, ...(client ? { client } : {}) });
      if (logs.size < MAX_CALL_LOGS) logs.set(id, log);
    }
    return log;
  };
}

const MAX_CALL_LOGS = 64;

interface CallScope {
  app: App;
  conn: Connection;
  server: Server;
  questions: OpenSession | undefined;
  profileFor: (clientName: string | undefined) => Profile;
  offered: (profile: Profile) => ProfileCatalog;
}

/** The tools/call handler of one connection: find the tool in the caller's profile, run it, count it. */
function toolsCall({ app, conn, server, questions, profileFor, offered }: CallScope) {
  const callLog = callLogs(conn.log ?? app.log);
  // Only a token makes an operator: clientInfo names are self-reported.
  const operator = conn.client !== undefined && app.config.http.operators.includes(conn.client);
  return async (request: CallToolRequest, ctx: ServerContext): Promise<CallToolResult> => {
    // Re-entered with the person's answer: the question it put is closed.
    questions?.answered(ctx.mcpReq.id);
    const { name } = request.params;
    const args = callArguments(request.params);
    const done = conn.observeCall?.(name, args);
    const clientName = clientNameOf(server, ctx);
    const profile = profileFor(clientName);
    const catalog = offered(profile);
    const entry = catalog.entries.get(name);
    if (!entry) {
      done?.('protocol_error');
      const names = catalog.tools.map((t) => t.name).join(', ');
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool "${name}". Available tools: ${names}.`);
    }
    const client = conn.client ?? clientName ?? null;
    const log = callLog(entry.tool.name, profile, client);
    const token = request.params._meta?.progressToken;
    try {
      const result = await app.track(
        entry.call(args, {
          deps: app,
          store: app.store,
          answerWaits: app.answerWaits,
          config: app.config,
          log,
          client,
          operator,
          now: app.now,
          signal: ctx.mcpReq.signal,
          approval: {
            round: approvalRound(server, ctx, client),
            ask: (request) => {
              const refused = questions?.take(ctx.mcpReq.id, conn.client ?? null, ctx.mcpReq.signal);
              if (refused) log.warn('approval question refused', { code: refused.code, open: questions!.size });
              return refused ? Promise.resolve(errorResult(refused.toBody())) : askApproval(app.approvalCodec, request, client);
            },
          },
          progress:
            token === undefined
              ? undefined
              : (progress, total, message) =>
                  ctx.mcpReq.notify({
                    method: 'notifications/progress',
                    params: { progressToken: token, progress, ...(total === undefined ? {} : { total }), message },
                  }),
        }),
      );
      done?.(result);
      return result;
    } catch (err) {
      done?.('protocol_error');
      throw err;
    }
  };
}
