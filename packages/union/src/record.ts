/** Reading a client's JSON without trusting its shape. */

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Own properties only: a client key such as `constructor` must never find an inherited one. */
export const own = (o: object, key: PropertyKey): unknown => (Object.hasOwn(o, key) ? (o as Record<PropertyKey, unknown>)[key] : undefined);
