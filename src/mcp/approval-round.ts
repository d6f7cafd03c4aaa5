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
import { errors, type NotifyError } from '../core/errors.js';
import type { ApprovalGrant, ApprovalRequest, ApprovalRound } from '../notification/approval.js';

/** What travels in requestState: signed, not encrypted (the client may read it; it holds no secret). */
export interface ApprovalState extends ApprovalGrant {
  v: 1;
  /** The client the question was put to: another client's call cannot use its answer. */
  client: string | null;
}

/** How long a person has to answer (the state expires after it); a 2025-11-25 question waits no longer. */
export const APPROVAL_TTL_S = 600;
/** Questions one 2025-11-25 call may put in a row (another only when the message changed after an answer). */
export const APPROVAL_MAX_ROUNDS = 3;

/**
 * Bounds on 2025-11-25 approval questions waiting for a person at once: per session, and per
 * token client over all its sessions (every caller without a token shares one share). Each
 * holds a call open until answered or APPROVAL_TTL_S; a 2026-07-28 question holds nothing here.
 */
export const OPEN_QUESTIONS_PER_SESSION = 8;
export const OPEN_QUESTIONS_PER_CLIENT = 32;
/** What a refused question advises: the wait before one of the open ones is likely answered or ended. */
const RETRY_AFTER_S = 30;

/**
 * The open questions of one process, counted per client; a session counts its own
 * (`session()`). A question is open from its ask until the call comes back with the answer,
 * is cancelled, or its session ends, and at most APPROVAL_TTL_S in any case.
 */
export class OpenQuestions {
  private readonly byClient = new Map<string, number>();
  constructor(
    private readonly limits = {
      perSession: OPEN_QUESTIONS_PER_SESSION,
      perClient: OPEN_QUESTIONS_PER_CLIENT,
      ttlMs: APPROVAL_TTL_S * 1000,
    },
  ) {}

  /** One session's questions, keyed by the id of the call that asked. */
  session() {
    const open = new Map<unknown, () => void>();
    return {
      /** The call `requestId` is back (answered) or asks again: its earlier question is closed. */
      answered: (requestId: unknown) => open.get(requestId)?.(),
      /** Takes a place for the question call `requestId` of `client` puts, or refuses it past a bound. */
      take: (requestId: unknown, client: string | null, signal: AbortSignal | undefined): NotifyError | undefined => {
        open.get(requestId)?.();
        const key = client ?? '';
        const used = this.byClient.get(key) ?? 0;
        if (open.size >= this.limits.perSession || used >= this.limits.perClient) {
          const whose =
            open.size >= this.limits.perSession ? `this session has ${open.size}` : `client ${client ?? '(no token)'} has ${used}`;
          return errors.rateLimited(
            `Too many approval questions wait for a person: ${whose} open, the most this server keeps. Nothing was sent. Wait for the person to answer (or cancel a waiting call), then retry after retry_after_s.`,
            { retryAfterS: RETRY_AFTER_S },
          );
        }
        this.byClient.set(key, used + 1);
        let closed = false;
        const close = () => {
          if (closed) return;
          closed = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', close);
          open.delete(requestId);
          const n = (this.byClient.get(key) ?? 1) - 1;
          if (n > 0) this.byClient.set(key, n);
          else this.byClient.delete(key);
        };
        // The SDK gives up on the question by then; unref: a waiting question keeps no process alive.
        const timer = setTimeout(close, this.limits.ttlMs + 1_000);
        timer.unref();
        signal?.addEventListener('abort', close, { once: true });
        open.set(requestId, close);
        return undefined;
      },
      /** The session ended: its questions with it. */
      closeAll: () => {
        for (const close of [...open.values()]) close();
      },
      get size() {
        return open.size;
      },
    };
  }

  openFor(client: string | null): number {
    return this.byClient.get(client ?? '') ?? 0;
  }
}

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
  const envelope = ctx.mcpReq.envelope as
    | { [CLIENT_CAPABILITIES_META_KEY]?: { elicitation?: { form?: object; url?: object } } }
    | undefined;
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
export async function askApproval(
  codec: RequestStateCodec<ApprovalState>,
  request: ApprovalRequest,
  client: string | null,
): Promise<CallToolResult> {
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
