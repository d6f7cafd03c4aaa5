/**
 * The union package's README shows what it generates for a small union; this keeps it true. Every
 * block after a `<!-- generated: X -->` marker must equal the library's output for X (a
 * profile, or `errors`), and the quick start must define the union the blocks were made from.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { profileTools, unionProfiles, validateUnionCall } from '@notify-mcp/union';
import { shapesDef, shownCalls } from '../fixtures/union-docs/shapes.js';

const doc = readFileSync(new URL('../../packages/union/README.md', import.meta.url), 'utf8');
const blocks = new Map(
  [...doc.matchAll(/<!-- generated: (\S+) -->\n```json\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, JSON.parse(m[2]!) as unknown]),
);

describe('packages/union/README.md', () => {
  it('shows every profile, as the library generates it', () => {
    expect([...blocks.keys()]).toEqual([...unionProfiles(shapesDef), 'errors']);
    for (const profile of unionProfiles(shapesDef)) {
      expect(blocks.get(profile), profile).toEqual(
        profileTools(shapesDef, profile).map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
      );
    }
  });

  it('shows errors as they read', () => {
    expect(blocks.get('errors')).toEqual(
      shownCalls.map((c) => {
        const r = validateUnionCall(shapesDef, {}, c);
        return r.ok ? [] : r.issues;
      }),
    );
  });

  it('its quick start defines that union, imports only the package, and is about 20 lines', () => {
    const quick = /## Quick start\n\n```ts\n([\s\S]*?)\n```/.exec(doc)![1]!;
    expect(quick).toContain("from '@notify-mcp/union'");
    expect(quick).not.toMatch(/src\//);
    for (const v of shapesDef.variants) expect(quick).toContain(`z.literal('${v.value}')`);
    expect(quick.split('\n').length).toBeLessThanOrEqual(22);
  });

  it('names every public export of @notify-mcp/union', () => {
    const index = readFileSync(new URL('../../packages/union/src/index.ts', import.meta.url), 'utf8');
    const names = [...index.matchAll(/export (?:type )?\{([^}]*)\}/g)]
      .flatMap((m) => m[1]!.split(',').map((n) => n.trim().replace(/^type /, '')))
      .filter(Boolean);
    expect(names.length).toBeGreaterThan(30);
    const api = doc.slice(doc.indexOf('## The public API'));
    for (const name of names) expect(api, name).toContain(`\`${name}\``);
  });

  it('is linked from the README', () => {
    expect(readFileSync(new URL('../../README.md', import.meta.url), 'utf8')).toContain('](packages/union/README.md)');
  });
});
