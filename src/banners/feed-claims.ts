import { FeedFullError, FeedShareError } from './feed-errors.js';

/**
 * The segments the feed's followers have claimed, in all and per client (see feedClientKey),
 * so that no one client can take the whole feed from everyone else.
 */
export class FeedClaims {
  /** Claims per segment, and per client per segment. */
  private readonly claimed = new Map<string, number>();
  private readonly shares = new Map<string, Map<string, number>>();

  constructor(
    private readonly limits: {
      /** Distinct segments followed at most, by all clients together. */
      maxSegments: number;
      /** Distinct segments one client may follow at once. */
      segmentsPerClient: number;
    },
  ) {}

  /** Some follower has claimed `name`. */
  has(name: string): boolean {
    return this.claimed.has(name);
  }

  /**
   * Reserves `audiences` for `client`, synchronously: throws FeedShareError when the client
   * would follow more than its share of distinct segments, FeedFullError when all clients
   * together would follow more than the hub tracks. Returns the release.
   */
  claim(client: string, audiences: readonly string[]): () => void {
    const { maxSegments, segmentsPerClient } = this.limits;
    const names = new Set(audiences);
    const share = this.shares.get(client) ?? new Map<string, number>();
    let mine = share.size;
    let all = this.claimed.size;
    for (const name of names) {
      if (!share.has(name)) mine++;
      if (!this.claimed.has(name)) all++;
    }
    if (mine > segmentsPerClient) throw new FeedShareError(segmentsPerClient);
    if (all > maxSegments) throw new FeedFullError(maxSegments);
    this.shares.set(client, share);
    for (const name of names) {
      share.set(name, (share.get(name) ?? 0) + 1);
      this.claimed.set(name, (this.claimed.get(name) ?? 0) + 1);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const name of names) {
        const n = share.get(name)! - 1;
        if (n > 0) share.set(name, n);
        else share.delete(name);
        const m = this.claimed.get(name)! - 1;
        if (m > 0) this.claimed.set(name, m);
        else this.claimed.delete(name);
      }
      if (share.size === 0 && this.shares.get(client) === share) this.shares.delete(client);
    };
  }

  clear(): void {
    this.claimed.clear();
    this.shares.clear();
  }
}
