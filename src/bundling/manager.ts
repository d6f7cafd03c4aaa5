import type { CallToolResult } from '@modelcontextprotocol/server';
import { silentLogger, type Logger } from '../core/log.js';
import {
  createDispatcher,
  type CallOptions,
  type CallUpstream,
  type Dispatcher,
  type DispatcherOptions,
  type ToolArguments,
} from './dispatcher.js';
import { listFingerprint } from './fingerprint.js';
import { reconcile, reverseKey } from './reconcile.js';
import { semanticSchemaHash } from './schema-hash.js';
import { MAX_TOOL_DEPTH, nestsDeeperThan, toolLabel } from './tool-screen.js';
import type { Reconciled, ServerBundle, Tool } from './types.js';

export interface BundleState {
  reconciled: Reconciled;
  /** `listFingerprint(reconciled.tools)`: a cache key for the list as served. */
  fingerprint: string;
}

/** One agent turn: the tool list it sees and calls against stays fixed until `end()`. */
export interface Turn extends BundleState {
  call(name: string, args?: ToolArguments, options?: CallOptions): Promise<CallToolResult>;
  /** Idempotent. The last open turn to end applies a pending list. */
  end(): void;
}

export type ChangeListener = (state: BundleState) => void;

/** `defaultTimeoutMs` and `serverTimeoutMs` bound every call (see `DispatcherOptions`). */
export interface ManagerOptions extends DispatcherOptions {
  callUpstream: CallUpstream;
  log?: Logger;
  /**
   * Every server that may register (the gateway: its servers file), so that while one is not
   * registered no other can take its prefix (`<serverId>__…`).
   */
  serverIds?: Iterable<string>;
  /** Tag every tool with its server, not only the prefixed ones (see `ReconcileOptions`). */
  tagAll?: boolean;
}

/**
 * Holds the registered servers and the reconciled list. A rebuild while any turn is open is
 * kept pending and applied when the last open turn ends, so a model never sees the list move
 * under a call it already made. Listeners hear about an applied list whose fingerprint
 * changed. Under constant overlapping turns a pending list waits for a quiet moment; every
 * call is bounded (60 s unless set), so a hung upstream cannot hold a turn open for longer.
 */
export class BundleManager {
  private readonly servers = new Map<string, ServerBundle>();
  /** Last semantic hash per tool (by `reverseKey`), kept across unregister to catch drift on reconnect. */
  private readonly knownHashes = new Map<string, string>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly log: Logger;
  private readonly callUpstream: CallUpstream;
  private readonly dispatcherOptions: DispatcherOptions;
  private applied: BundleState;
  private dispatcher: Dispatcher;
  private pendingState: BundleState | undefined;
  private openTurns = 0;
  private readonly reserved: readonly string[];
  private readonly tagAll: boolean;

  constructor(options: ManagerOptions) {
    this.log = options.log ?? silentLogger;
    this.reserved = [...(options.serverIds ?? [])];
    this.tagAll = options.tagAll ?? false;
    this.callUpstream = options.callUpstream;
    this.dispatcherOptions = {
      defaultTimeoutMs: options.defaultTimeoutMs,
      serverTimeoutMs: options.serverTimeoutMs,
      unavailable: options.unavailable,
    };
    this.applied = stateOf(reconcile([]));
    this.dispatcher = createDispatcher(this.applied.reconciled, this.callUpstream, this.dispatcherOptions);
  }

  /**
   * Add or replace a server's tools; logs each tool's schema hash and warns on drift. The
   * hash is `semanticSchemaHash`: a reordered `required` or `enum` is not drift (the list
   * fingerprint still changes, since the bytes served do).
   */
  register(serverId: string, tools: readonly Tool[], options: { label?: string } = {}): void {
    const accepted: Tool[] = [];
    for (const tool of tools) {
      // Hashing and serving walk the definition: one too deep to walk costs only itself.
      if (nestsDeeperThan(tool, MAX_TOOL_DEPTH)) {
        this.log.warn('bundle tool refused', {
          server: serverId,
          tool: toolLabel(tool),
          reason: `its definition nests deeper than ${MAX_TOOL_DEPTH} levels`,
        });
        continue;
      }
      accepted.push(tool);
      const hash = semanticSchemaHash(tool);
      const key = reverseKey(serverId, tool.name);
      const previous = this.knownHashes.get(key);
      // Logged when new or changed, not on every list: a flood of lists is not a flood of lines.
      if (previous !== hash) this.log.info('bundle tool registered', { server: serverId, tool: tool.name, schema_hash: hash });
      if (previous !== undefined && previous !== hash) {
        this.log.warn('bundle tool changed its schema under the same name', {
          server: serverId,
          tool: tool.name,
          previous_hash: previous,
          schema_hash: hash,
        });
      }
      this.knownHashes.set(key, hash);
    }
    const bundle: ServerBundle = { serverId, tools: accepted };
    if (options.label !== undefined) bundle.label = options.label;
    this.servers.set(serverId, bundle);
    this.rebuild();
  }

  /** Remove a server's tools. Returns false when it was not registered. */
  unregister(serverId: string): boolean {
    if (!this.servers.delete(serverId)) return false;
    this.rebuild();
    return true;
  }

  has(serverId: string): boolean {
    return this.servers.has(serverId);
  }

  /** Reconcile the registered servers; applied now, or at the end of the open turns. */
  rebuild(): void {
    const next = stateOf(reconcile([...this.servers.values()], { reserve: this.reserved, tagAll: this.tagAll }));
    const { collisions, renames } = next.reconciled.report;
    const latest = this.pendingState ?? this.applied;
    if (next.fingerprint === latest.fingerprint) {
      this.log.debug('bundle rebuilt', { fingerprint: next.fingerprint, tools: next.reconciled.tools.length, unchanged: true });
    } else {
      this.log.info('bundle rebuilt', {
        fingerprint: next.fingerprint,
        tools: next.reconciled.tools.length,
        collisions: clipList(
          collisions.map((c) => `${c.name} (${clipList(c.serverIds, 10).join(', ')})`),
          LOGGED_ITEMS,
        ),
        renames: clipList(
          renames.map((r) => `${reverseKey(r.serverId, r.originalName)} -> ${r.newName} [${r.reasons.join(',')}]`),
          LOGGED_ITEMS,
        ),
      });
    }
    if (this.openTurns > 0) {
      this.pendingState = next;
      return;
    }
    this.apply(next);
  }

  /** The list clients see now. */
  get current(): BundleState {
    return this.applied;
  }

  get fingerprint(): string {
    return this.applied.fingerprint;
  }

  /** True while a rebuilt list waits for the open turns to end. */
  get pending(): boolean {
    return this.pendingState !== undefined;
  }

  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  beginTurn(): Turn {
    this.openTurns++;
    const { reconciled, fingerprint } = this.applied;
    const dispatcher = this.dispatcher;
    let ended = false;
    return {
      reconciled,
      fingerprint,
      call: (name, args, options) => dispatcher.call(name, args, options),
      end: () => {
        if (ended) return;
        ended = true;
        this.openTurns--;
        if (this.openTurns === 0 && this.pendingState) {
          const next = this.pendingState;
          this.pendingState = undefined;
          this.apply(next);
        }
      },
    };
  }

  async withTurn<T>(fn: (turn: Turn) => Promise<T>): Promise<T> {
    const turn = this.beginTurn();
    try {
      return await fn(turn);
    } finally {
      turn.end();
    }
  }

  /** One call as its own turn. Never rejects. */
  call(name: string, args?: ToolArguments, options?: CallOptions): Promise<CallToolResult> {
    return this.withTurn((turn) => turn.call(name, args, options));
  }

  private apply(next: BundleState): void {
    const changed = next.fingerprint !== this.applied.fingerprint;
    // Always swap: the same list can route differently (a server left, another joined).
    this.applied = next;
    this.dispatcher = createDispatcher(next.reconciled, this.callUpstream, this.dispatcherOptions);
    if (!changed) return;
    for (const listener of this.listeners) {
      try {
        listener(next);
      } catch (err) {
        this.log.error('bundle change listener failed', { error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
}

/** Collisions and renames named in one log line; the rest are counted. */
const LOGGED_ITEMS = 50;

function clipList(items: string[], max: number): string[] {
  return items.length <= max ? items : [...items.slice(0, max), `… and ${items.length - max} more`];
}

function stateOf(reconciled: Reconciled): BundleState {
  return { reconciled, fingerprint: listFingerprint(reconciled.tools) };
}
