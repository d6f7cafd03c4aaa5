/** Failures of the store itself (not of a caller's request): bad schema version, bad URL. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
