/**
 * Which packages are test tools (test/package.json installs them, apart from the server's own
 * install), and a Node resolve hook that finds them from the project's files outside test/
 * (bench/, soak/), registered by test/register.mjs. test/vitest.config.ts applies the same rule
 * inside vitest. Dependencies only: this runs before anything else is installed.
 */
import { readFileSync } from 'node:fs';

export const TEST_PACKAGE_JSON = new URL('./package.json', import.meta.url);
export const TEST_PACKAGES = new Set(Object.keys(JSON.parse(readFileSync(TEST_PACKAGE_JSON, 'utf8')).dependencies));

/** The package a bare specifier names (`fast-check`, `@scope/name` of `@scope/name/sub`), or undefined. */
export function packageOf(specifier) {
  if (!/^[@a-z0-9]/i.test(specifier) || specifier.includes(':') || specifier.startsWith('@vite/') || specifier.startsWith('@id/'))
    return undefined;
  const parts = specifier.split('/');
  if (!specifier.startsWith('@')) return parts[0];
  return parts.length > 1 ? `${parts[0]}/${parts[1]}` : undefined;
}

/** Node resolve hook: a test tool imported from the project's own files resolves from test/. */
export async function resolve(specifier, context, nextResolve) {
  const name = packageOf(specifier);
  const own = context.parentURL !== undefined && !context.parentURL.includes('/node_modules/');
  if (name !== undefined && own && TEST_PACKAGES.has(name))
    return nextResolve(specifier, { ...context, parentURL: TEST_PACKAGE_JSON.href });
  return nextResolve(specifier, context);
}
