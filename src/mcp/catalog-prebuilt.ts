/**
 * The flat tools/list of the default configuration, written at build time (`npm run build`,
 * dist/tools-flat.json) by the same buildCatalog a server runs, with the configuration's
 * catalogKey. A server whose key is the same answers its first flat tools/list from that
 * file instead of generating JSON Schema from the zod union at start-up; the tools' call
 * handlers are still built from the union, on the first call (src/mcp/catalog.ts).
 * test/e2e/catalog-prebuilt.test.ts checks the file against a list generated from the source.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildCatalog, type PrebuiltList } from './catalog.js';
import { loadConfig, type Profile } from '../config/config.js';

export type { PrebuiltList } from './catalog.js';

export const PREBUILT_PROFILE: Profile = 'flat';
/** The prebuilt list when it was built for this key; otherwise (or with no file) undefined, and the list is built. */
export function readPrebuiltList(key: string | undefined, file: URL): PrebuiltList | undefined {
  if (key === undefined) return undefined;
  let list: PrebuiltList;
  try {
    list = JSON.parse(readFileSync(file, 'utf8')) as PrebuiltList;
  } catch {
    return undefined;
  }
  return list.key === key && list.profile === PREBUILT_PROFILE ? list : undefined;
}

/** The list as a server with the default configuration (no variable set) builds it. */
export function generatePrebuiltList(): PrebuiltList {
  const config = loadConfig({});
  const { fingerprint, hashes, tools } = buildCatalog(config)[PREBUILT_PROFILE];
  return { key: config.catalogKey!, profile: PREBUILT_PROFILE, fingerprint, hashes, tools };
}

export function writePrebuiltList(file: string | URL): void {
  writeFileSync(file, JSON.stringify(generatePrebuiltList()));
}
