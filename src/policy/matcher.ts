/** What one channel knows about its allowlist syntax (entries) and its recipients. */
export interface RecipientMatcher {
  /** Why an allowlist entry cannot be used, or undefined when it can; checked at start. */
  entryProblem(entry: string): string | undefined;
  /**
   * Whether one recipient, exactly as the channel will hand it to its provider, is allowed
   * by these entries. Anything the matcher cannot read with certainty is refused.
   */
  allows(recipient: string, entries: readonly string[]): boolean;
}
