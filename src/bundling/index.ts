/**
 * notify-mcp/bundling: tool-name reconciliation for agent hosts that bundle several MCP
 * servers, and the gateway behind `notify-mcp bundle`. Explicit export list.
 */
export { reconcile, reverseKey, parseReverseKey } from './reconcile.js';
export type {
  Collision,
  ReconcileOptions,
  ReconcileReport,
  Reconciled,
  Rename,
  RenameReason,
  ServerBundle,
  Tool,
  ToolTarget,
} from './types.js';
export { TOOL_NAME_PATTERN, MAX_TOOL_NAME, isLegalToolName } from './names.js';
export { provenanceTag, tagDescription, neutralizeTags, provenanceText, INLINE_TAG_MAX } from './provenance.js';
export { schemaHash, canonicalJson } from '@notify-mcp/union';
export { semanticSchemaHash } from './schema-hash.js';
export { listFingerprint } from './fingerprint.js';
export { createDispatcher, errorResult, DEFAULT_CALL_TIMEOUT_MS } from './dispatcher.js';
export type {
  CallOptions,
  CallUpstream,
  Dispatcher,
  DispatcherOptions,
  ToolArguments,
  UpstreamCallOptions,
} from './dispatcher.js';
export { BundleManager } from './manager.js';
export type { BundleState, ChangeListener, ManagerOptions, Turn } from './manager.js';
export { DuplicateServerIdError, GatewayConfigError, GatewayStartError, UpstreamUnavailableError } from './errors.js';
export { parseServersConfig, loadServersConfig } from './servers-config.js';
export type { UpstreamSpec, StdioServerSpec, HttpServerSpec } from './servers-config.js';
export { runGateway } from './gateway.js';
export type { Gateway, GatewayOptions } from './gateway.js';
export type { BackoffOptions } from './upstream.js';
