import type { Tool } from '@modelcontextprotocol/server';

export type { Tool };

/** One upstream server's tools, as the reconciler receives them. */
export interface ServerBundle {
  /** Stable id of the server (the `mcpServers` key); the prefix of its colliding tools. */
  serverId: string;
  /** Human name for the provenance tag (`[GitHub] …`); the serverId when absent. */
  label?: string;
  tools: Tool[];
}

/** Where a reconciled name is sent: the server and the name that server knows. */
export interface ToolTarget {
  serverId: string;
  originalName: string;
}

/** Why a tool's name changed. A tool may have several reasons. */
export type RenameReason =
  | 'collision' // the same name is offered by more than one tool
  | 'foreign-prefix' // the name reads as another server's (`<otherServerId>__…`), so it moves into its own server's
  | 'displaced' // another server's tool has the name (after sanitizing), so it moves into its own server's
  | 'illegal-characters' // outside [a-zA-Z0-9_-]
  | 'too-long' // over 64 characters (after prefixing)
  | 'empty'
  | 'duplicate'; // the result would equal another tool's final name

export interface Collision {
  name: string;
  /** Every server offering the name, sorted; a server appears twice when it lists the name twice. */
  serverIds: string[];
}

export interface Rename extends ToolTarget {
  newName: string;
  reasons: RenameReason[];
}

export interface ReconcileReport {
  collisions: Collision[];
  renames: Rename[];
}

export interface ReconcileOptions {
  /**
   * Server ids whose prefix (`<serverId>__`) no other server may take, beside those of the
   * bundles given: a gateway's configured servers that are not connected at the moment.
   */
  reserve?: Iterable<string>;
  /**
   * Tag every tool with its server (`[GitHub] …`), not only the prefixed ones, so that no
   * tool's origin is left to what its upstream wrote (the gateway does). Default false.
   */
  tagAll?: boolean;
}

export interface Reconciled {
  /** The tools to list, in a deterministic order (by serverId, then original name). */
  tools: Tool[];
  /** New name → upstream target. */
  forward: ReadonlyMap<string, ToolTarget>;
  /**
   * `reverseKey(serverId, originalName)` → new name. The key is `serverId:originalName`
   * with `%` and `:` inside either part escaped (`%25`, `%3A`); build it with `reverseKey`.
   */
  reverse: ReadonlyMap<string, string>;
  report: ReconcileReport;
}
