/**
 * The approval step over MCP: one way of asking for both protocol eras. A send that needs
 * approval returns an input-required result carrying a form elicitation and a signed
 * requestState (the grant: notification id, time, payload hash, client). A 2026-07-28 client
 * asks its person and calls again with the answer and the state; for a 2025-11-25 client the
 * SDK's legacy shim sends `elicitation/create` during the call and re-enters the handler the
 * same way. Either way the server keeps nothing between rounds (stateless HTTP works), and
 * the state is verified (HMAC, expiry) before the handler sees it.
 */
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type RequestStateCodec,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ApprovalGrant, ApprovalRequest, ApprovalRound } from '../notification/approval.js';

/** What travels in requestState: signed, not encrypted (the client may read it; it holds no secret). */
export interface ApprovalState extends ApprovalGrant {
  v: 1;
  /** The client the question was put to: another client's call cannot use its answer. */
  client: string | null;
}

/** How long a person has to answer (the state expires after it). */
export const APPROVAL_TTL_S = 600;

/** The key of the embedded elicitation in inputRequests / inputResponses. */
const KEY = 'approval';

/**
 * One codec per process: every server instance must verify what another minted. With
 * NOTIFY_APPROVAL_KEY unset the key is random per process, so replicas behind a balancer
 * (stateless 2026-07-28 HTTP, where the answer may reach another replica) need it set.
 */
export function createApprovalCodec(key: string | undefined): RequestStateCodec<ApprovalState> {
  return createRequestStateCodec<ApprovalState>({ key: key ?? randomBytes(32), ttlSeconds: APPROVAL_TTL_S });
}

/** Form elicitation, as declared for this request (2026-07-28) or at the handshake (2025-11-25). */
function canElicitForm(server: Server, ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as { [CLIENT_CAPABILITIES_META_KEY]?: { elicitation?: { form?: object; url?: object } } } | undefined;
  const elicitation = envelope?.[CLIENT_CAPABILITIES_META_KEY]?.elicitation ?? server.getClientCapabilities()?.elicitation;
  // An empty elicitation capability means form mode (2025-06-18 clients declared it so).
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
}

function isState(v: unknown): v is ApprovalState {
  const s = v as Partial<ApprovalState> | undefined;
  return (
    s?.v === 1 &&
    typeof s.id === 'string' &&
    typeof s.at === 'number' &&
    typeof s.payload_sha256 === 'string' &&
    (s.key === null || typeof s.key === 'string')
  );
}

/** This round as the pipeline's approval step reads it. */
export function approvalRound(server: Server, ctx: ServerContext, client: string | null): ApprovalRound {
  const round: ApprovalRound = { canAsk: canElicitForm(server, ctx) };
  // Verified by the codec before the handler ran (ServerOptions.requestState.verify).
  const state = ctx.mcpReq.requestState<unknown>();
  if (!isState(state) || state.client !== client) return round;
  const answer = inputResponse(ctx.mcpReq.inputResponses, KEY);
  if (answer.kind !== 'elicit') return round;
  const accepted = answer.action === 'accept' && answer.content?.approve === true;
  const grant: ApprovalGrant = { id: state.id, at: state.at, payload_sha256: state.payload_sha256, key: state.key };
  return { ...round, previous: { grant, answer: accepted ? 'accept' : 'decline' } };
}

/** The question, as the tool's answer: the client asks its person, then calls again. */
export async function askApproval(codec: RequestStateCodec<ApprovalState>, request: ApprovalRequest, client: string | null): Promise<CallToolResult> {
  const requestState = await codec.mint({ v: 1, ...request.grant, client });
  const result = inputRequired({
    inputRequests: {
      [KEY]: inputRequired.elicit({
        mode: 'form',
        message: request.message,
        requestedSchema: {
          type: 'object',
          properties: {
            approve: { type: 'boolean', title: 'Send it', description: 'true sends exactly the message shown; false sends nothing' },
          },
          required: ['approve'],
        },
      }),
    },
    requestState,
  });
  // tools/call answers either; the SDK's seam tells them apart (resultType).
  return result as unknown as CallToolResult;
}
