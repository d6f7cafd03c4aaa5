/**
 * The architecture rules of src/ (docs/architecture.md, "Layers"), checked by
 * test/project/architecture.test.ts with dependency-cruiser. Type-only imports count.
 *
 * Layers, bottom to top; a file may import its own layer or a lower one, never a higher.
 * The union library is a package of its own (packages/union), below everything: src/ takes
 * it by its name, as any dependency; its own sources are checked by the last rules.
 */
const LAYERS = [
  ['core', '^src/core/'],
  ['providers', '^src/providers/'],
  ['store', '^src/store/'],
  ['policy', '^src/policy/'],
  ['channels', '^src/channels/'],
  ['domain (notification, banners)', '^src/(notification|banners)/'],
  ['config', '^src/config/'],
  ['mcp', '^src/mcp/'],
  ['console', '^src/console/'],
  ['transports', '^src/transports/'],
  ['bundling', '^src/bundling/'],
  ['app', '^src/app\\.ts$'],
  ['cli and the export lists', '^src/(cli/|cli\\.ts$|index\\.ts$|union\\.ts$)'],
];

const upward = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `layer-${name.split(' ')[0]}`,
  comment: `${name} may not import a higher layer (${LAYERS.slice(i + 1).map(([n]) => n.split(' ')[0]).join(', ')})`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(i + 1).map(([, p]) => `(${p})`).join('|') },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'an import cycle between files (type-only imports count)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    // Every file of src/ belongs to a layer: a new top-level folder needs a place in the order.
    {
      name: 'layer-every-file',
      comment: 'a file in no layer imports something',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map(([, p]) => `(${p})`).join('|') },
      to: {},
    },
    {
      name: 'layer-every-file',
      comment: 'a file in no layer is imported',
      severity: 'error',
      from: {},
      to: { path: '^src/', pathNot: LAYERS.map(([, p]) => `(${p})`).join('|') },
    },
    {
      name: 'mcp-sdk-only-in-binding',
      comment: 'only mcp/, transports/, bundling/ and app.ts use the MCP SDK',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(mcp/|transports/|bundling/|app\\.ts$)' },
      to: { path: '(^|/)node_modules/@modelcontextprotocol/' },
    },
    {
      name: 'domain-takes-store-ports',
      comment:
        'a use case (notification/, banners/) takes the store by its ports (store/ports/*), never an engine or the whole contract; ' +
        'the store errors and the banner status rule aside',
      severity: 'error',
      from: { path: '^src/(notification|banners)/' },
      to: { path: '^src/store/', pathNot: '^src/store/(ports/|index\\.ts$|errors\\.ts$|banner-status\\.ts$)' },
    },
    {
      name: 'core-is-a-leaf',
      comment: 'core/ imports nothing of ours outside core/ (packages aside)',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'union-only-zod-and-node',
      comment: 'the union package imports only itself, zod and node',
      severity: 'error',
      from: { path: '^packages/union/' },
      to: { pathNot: '^packages/union/src/|(^|/)node_modules/zod/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'union-by-its-name',
      comment: 'the server takes the union package by its name (@notify-mcp/union), never by a path into it',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^packages/' },
    },
    {
      name: 'not-resolvable',
      comment: 'an import that does not resolve',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // A workspace package stays what it is to its importers, a package in node_modules.
    preserveSymlinks: true,
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
