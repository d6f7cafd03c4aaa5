/** The sessions port: console sessions signed out before their cookie ends. */

export interface SessionsPort {
  /** Records console session `id` as signed out until `expiresAt` (when its cookie ends anyway); drops those ended by `now`. */
  revokeSession(id: string, expiresAt: number, now: number): Promise<void>;
  sessionRevoked(id: string): Promise<boolean>;
}
