/**
 * The keyspaces of the idempotency claims, in one place. A caller's own key is claimed as it
 * came; every other claim a send takes is named here, each in a keyspace of its own, so one
 * never replays another's result. Every name is then scoped by client (`scopedKey`): two bots
 * that pick the same key do not share results. The strings are stored: never change them.
 */

/** An unkeyed send a person approved through the client: claimed under its approval, so a replayed approval sends once. */
export const approvalClaim = (approvalId: string): string => `approval:${approvalId}`;

/** The release of a send a person approved in the console (./release-approved.ts). */
export const approvedReleaseClaim = (id: string): string => `approved:${id}`;

/** The release of a waiting send from the outbox (./outbox.ts). */
export const outboxReleaseClaim = (id: string): string => `outbox:${id}`;

/** A send kept in the outbox under the caller's key (./schedule.ts): never the key's send result. */
export const scheduleClaim = (key: string): string => `schedule:${key}`;

/** A claim's name scoped by the calling client, as the store keys it. */
export const scopedKey = (client: string | null, name: string): string => JSON.stringify([client ?? '', name]);
