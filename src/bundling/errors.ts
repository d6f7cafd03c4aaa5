/** Errors of the bundling library and gateway. None of them reaches the agent as a throw. */

/** Two bundles given to `reconcile` share a serverId: a caller bug, since ids key the maps. */
export class DuplicateServerIdError extends Error {
  override readonly name = 'DuplicateServerIdError';
  constructor(readonly serverId: string) {
    super(`serverId "${serverId}" appears in more than one bundle`);
  }
}

/** The upstream that owns a tool is not connected (dead, reconnecting, or unregistered). */
export class UpstreamUnavailableError extends Error {
  override readonly name = 'UpstreamUnavailableError';
  constructor(
    readonly serverId: string,
    options?: { cause?: unknown },
  ) {
    super(`upstream server "${serverId}" is not connected`, options);
  }
}

/** The gateway's servers file is missing, unreadable or not in the `mcpServers` format. */
export class GatewayConfigError extends Error {
  override readonly name = 'GatewayConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No upstream of the servers file could start: a gateway serving nothing would look healthy and help no one. */
export class GatewayStartError extends Error {
  override readonly name = 'GatewayStartError';
  constructor(message: string) {
    super(message);
  }
}
