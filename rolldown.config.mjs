/**
 * The `notify-mcp` command as one file (dist/cli.js), bundled from tsc's output (dist/cli/start.js, which loads main.js): loading some
 * 65 of our modules one by one (resolve, link, compile each) was most of what start-up
 * paid above the bare SDK server (bench/results.md, "Changes"). Packages stay external
 * (resolved from node_modules as before), except our own union package, whose modules are
 * ours to load as one file too; what cli.js imports lazily (HTTP, the gateway, PostgreSQL,
 * vendor providers) stays lazy, in dist/cli-chunks/. The library entry points
 * (dist/index.js, dist/union.js, dist/bundling) are tsc's, untouched.
 */
import { rmSync } from 'node:fs';

// Chunk names carry a content hash: the previous build's would otherwise pile up.
rmSync('dist/cli-chunks', { recursive: true, force: true });

export default {
  input: 'dist/cli/start.js',
  platform: 'node',
  external: (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0') && id !== '@notify-mcp/union',
  output: {
    dir: 'dist',
    format: 'esm',
    entryFileNames: 'cli.js',
    chunkFileNames: 'cli-chunks/[name]-[hash].js',
    sourcemap: true,
  },
};
