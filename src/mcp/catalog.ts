/**
 * Every tool the server offers, per profile, built on first use and kept: tools/list is the same
 * bytes for the same profile and configuration, in a fixed order (prompt caches depend on
 * it), with a schema hash per tool and a fingerprint per list.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { PROFILES, TOOL_GROUPS, type Config, type Profile, type ToolGroup } from '../config/config.js';
import { notificationDef } from '../channels/send-union.js';
import { unstorableRefusal } from '../core/storable-text.js';
import { describeApproval } from '../notification/approval-rules.js';
import { objectTools as defaultObjectTools } from './tools/index.js';
import { sendOutputSchema, sendTools } from './tools/send-notification.js';
import { AskFirst, type ObjectToolSpec, type ToolEntry } from './tool-kit.js';
import { objectToolGroups, SEND_GROUPS } from './tool-groups.js';
import { errorResult, failureResult, invalidResult, okResult } from './tool-result.js';
import {
  decodeJsonText,
  foldExamples,
  freeFormPaths,
  schemaHash,
  toJsonSchema,
  toStrict,
  validateObject,
  withJsonText,
} from '@notify-mcp/union';

export interface CatalogEntry extends ToolEntry {
  hash: string;
  /** The tool groups it belongs to (src/mcp/tool-groups.ts). */
  groups: readonly ToolGroup[];
}

export interface ProfileCatalog {
  tools: Tool[];
  entries: Map<string, CatalogEntry>;
  hashes: Record<string, string>;
  fingerprint: string;
}

export type Catalog = Record<Profile, ProfileCatalog>;

/**
 * A root schema with `type`, `properties` and `required` first, the rest after, in their
 * order. The SDK's two wire codecs re-parse tool schemas with different models (2025-11-25
 * puts those three keys first, 2026-07-28 keeps the order given), so only this order comes
 * out as the same bytes in both eras.
 */
function wireOrder<S>(schema: S): S {
  const { $schema, type, properties, required, ...rest } = schema as Record<string, unknown>;
  const head = { $schema, type, properties, required };
  return { ...Object.fromEntries(Object.entries(head).filter(([, v]) => v !== undefined)), ...rest } as S;
}

function wireTool(tool: Tool): Tool {
  return {
    ...tool,
    inputSchema: wireOrder(tool.inputSchema),
    ...(tool.outputSchema ? { outputSchema: wireOrder(tool.outputSchema) } : {}),
  };
}

function objectEntry(spec: ObjectToolSpec, profile: Profile): ToolEntry {
  const input = toJsonSchema(spec.input.strict());
  // A free-form value (a Slack block) travels as JSON text in every profile, as send_notification's
  // do (its union's freeForm option), and is read back here.
  const jsonText = freeFormPaths(input).length > 0;
  return {
    tool: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema: (profile === 'nested'
        ? toStrict(input, jsonText ? { freeForm: 'json-text' } : {})
        : foldExamples(jsonText ? withJsonText(input) : input)) as Tool['inputSchema'],
      outputSchema: spec.outputSchema as Tool['outputSchema'],
      annotations: { title: spec.title, ...spec.annotations },
    },
    async call(args, ctx) {
      if (jsonText && typeof args === 'object' && args !== null && !Array.isArray(args)) {
        const decoded = decodeJsonText(input, args as Record<string, unknown>);
        if (decoded.problems.length)
          return errorResult({
            code: 'INVALID_FIELD',
            message: decoded.problems[0]!.message,
            path: `/${decoded.problems[0]!.segments.map(String).join('/')}`,
          });
        args = decoded.value;
      }
      const checked = validateObject(spec.input, spec.name, args);
      if (!checked.ok) return invalidResult(checked);
      const answer = await spec.handler(checked.value, ctx);
      if (!(answer instanceof AskFirst)) return okResult(answer);
      // A tool whose change a person must approve (edit_notification) puts the question as a send does.
      // Only a round whose client can ask yields a question.
      if (!ctx.approval) throw new Error(`${spec.name} asked a person without an approval round`);
      return ctx.approval.ask(answer.request);
    },
  };
}

/**
 * The last line of defence: whatever throws below a tool (a bug, by definition) is logged
 * and answered as a coded INTERNAL_ERROR result, so a call never becomes a JSON-RPC error.
 */
function totalCall(name: string, call: CatalogEntry['call']): CatalogEntry['call'] {
  return async (args, ctx) => {
    // Before any handler: a call whose record a store could not write must not reach a provider.
    const unstorable = unstorableRefusal(args, ctx.client);
    if (unstorable) return errorResult(unstorable);
    try {
      return await call(args, ctx);
    } catch (err) {
      return failureResult(err, ctx.log, name);
    }
  };
}

/**
 * Pure: no store or provider is touched until a call, so `notify-mcp schema` needs neither.
 * Each profile's list is built when first read and kept (a server usually serves one
 * profile, and building all four cost start-up time); `onBuilt` hears of each once, with its
 * hashes, so they can be logged.
 */
export function buildCatalog(
  config: Config,
  objectTools: ObjectToolSpec[] = defaultObjectTools(config.channels),
  onBuilt?: (profile: Profile, built: ProfileCatalog) => void,
): Catalog {
  let shared: { def: ReturnType<typeof notificationDef>; outputSchema: Tool['outputSchema'] } | undefined;
  const build = (profile: Profile): ProfileCatalog => {
    shared ??= {
      def: notificationDef(
        config.channels,
        describeApproval(config.approval.rules, new Map(config.channels.map((c) => [c.name, c.channel.label]))),
      ),
      outputSchema: sendOutputSchema(config.channels) as Tool['outputSchema'],
    };
    const { def, outputSchema } = shared;
    const grouped = [
      ...sendTools(def, profile, outputSchema).map((e) => ({ e, groups: SEND_GROUPS })),
      ...objectTools.map((spec) => ({ e: objectEntry(spec, profile), groups: objectToolGroups(spec.name) })),
    ];
    const entries = grouped.map(({ e, groups }): CatalogEntry => {
      const tool = wireTool(e.tool);
      return { tool, call: totalCall(tool.name, e.call), hash: schemaHash(tool), groups };
    });
    const tools = entries.map((e) => e.tool);
    return {
      tools,
      entries: new Map(entries.map((e) => [e.tool.name, e])),
      hashes: Object.fromEntries(entries.map((e) => [e.tool.name, e.hash])),
      fingerprint: schemaHash(tools),
    };
  };
  const built = new Map<Profile, ProfileCatalog>();
  const catalog = {} as Catalog;
  for (const profile of PROFILES) {
    Object.defineProperty(catalog, profile, {
      enumerable: true,
      get() {
        let c = built.get(profile);
        if (c === undefined) {
          c = build(profile);
          built.set(profile, c);
          onBuilt?.(profile, c);
        }
        return c;
      },
    });
  }
  return catalog;
}

const narrowed = new WeakMap<ProfileCatalog, Map<string, ProfileCatalog>>();

/**
 * The part of a profile's catalog the groups offer, with its own fingerprint; the catalog
 * itself when they offer every tool. Kept per catalog and set, so tools/list stays the
 * same bytes (and object) per caller kind.
 */
export function offeredCatalog(catalog: ProfileCatalog, groups: readonly ToolGroup[]): ProfileCatalog {
  if (TOOL_GROUPS.every((g) => groups.includes(g))) return catalog;
  const key = [...groups].sort().join('+');
  let views = narrowed.get(catalog);
  if (!views) narrowed.set(catalog, (views = new Map()));
  let view = views.get(key);
  if (!view) {
    const entries = [...catalog.entries.values()].filter((e) => e.groups.some((g) => groups.includes(g)));
    const tools = entries.map((e) => e.tool);
    view = {
      tools,
      entries: new Map(entries.map((e) => [e.tool.name, e])),
      hashes: Object.fromEntries(entries.map((e) => [e.tool.name, e.hash])),
      fingerprint: schemaHash(tools),
    };
    views.set(key, view);
  }
  return view;
}
