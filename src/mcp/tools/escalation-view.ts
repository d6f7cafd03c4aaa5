/**
 * get_notification's escalation (DESIGN section 11): on a first send that named a policy, each
 * step with its channel, recipient, due time and state (and why it stopped: CAP_REACHED,
 * RECIPIENT_NOT_ALLOWED…). The answer, and where it was given, is the question's (./question-view.ts).
 */
import type { ConfiguredChannel, ConnectedChannel } from '../../channels/channel.js';
import type { DeliveriesPort, DeliveryStatus } from '../../store/ports/deliveries.js';
import type { OutboxEntry, OutboxPort } from '../../store/ports/outbox.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Offered only where a policy is configured: a branch then takes `escalate`. */
export const escalating = (channels: readonly ConfiguredChannel[]): boolean => channels.some((c) => 'escalate' in c.branch.shape);

export const ESCALATION_OUTPUT = {
  escalates: { type: 'string', description: 'an escalation step: the first send it escalates, whose question it carries' },
  escalation: {
    type: 'array',
    description:
      'the steps this send escalates to (escalate), in order: each a notification of its own; state is the outbox state until it leaves, then its delivery status; code: why it stopped',
    items: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        via: { type: 'string' },
        to: { type: 'array', items: { type: 'string' } },
        due_at: { type: 'string', format: 'date-time' },
        state: { type: 'string' },
        code: { type: 'string' },
      },
      required: ['id', 'via', 'due_at', 'state'],
    },
  },
} as const;

/** The recipients a step's call names, as its channel reads them; none when it no longer parses. */
function recipientsOf(entry: OutboxEntry, channels: readonly ConnectedChannel[]): string[] {
  const channel = channels.find((c) => c.name === entry.via);
  try {
    return channel?.open((typed) => typed.recipients(typed.parse(entry.call))) ?? [];
  } catch {
    return [];
  }
}

/** Why a step ended without leaving, from its release's outcome. */
function codeOf(entry: OutboxEntry): string | undefined {
  const code = (entry.outcome as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The steps of `id`, as the result shows them; for a step, the first send it escalates; nothing when neither. */
export async function escalationFields(
  store: Pick<OutboxPort, 'escalationSteps' | 'getOutboxEntry'> & Pick<DeliveriesPort, 'getDelivery'>,
  channels: readonly ConnectedChannel[],
  id: string,
): Promise<Record<string, unknown>> {
  const [steps, self] = await Promise.all([store.escalationSteps(id), store.getOutboxEntry(id)]);
  if (self?.escalates) return { escalates: self.escalates };
  if (steps.length === 0) return {};
  const shown = await Promise.all(
    steps.map(async (s) => {
      // Once released, its delivery record says how far it got (sent, delivered, failed…).
      const record = s.state === 'released' ? await store.getDelivery(s.id) : null;
      const state: DeliveryStatus | OutboxEntry['state'] = record?.status ?? s.state;
      const code = record?.error_code ?? codeOf(s);
      return { id: s.id, via: s.via, to: recipientsOf(s, channels), due_at: iso(s.due_at), state, ...(code ? { code } : {}) };
    }),
  );
  return { escalation: shown };
}
