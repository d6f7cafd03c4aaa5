/**
 * server.json, what the MCP registry lists, validates against the registry's published
 * schema (vendored in test/fixtures/mcp-registry/ with its licence) and says what
 * package.json says: the registry checks that the npm package's `mcpName` is the server's
 * name, and a version or package name that drifted would list a server nobody can install.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const read = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Record<string, any>;
const schema = read('test/fixtures/mcp-registry/server.schema.json');
const server = read('server.json');
const manifest = read('package.json');

function validator() {
  // strict: false, as the registry's schema carries OpenAPI's `example` and `discriminator`.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

describe('server.json for the MCP registry', () => {
  it("validates against the registry's schema, the one its $schema names", () => {
    const validate = validator();
    expect(validate(server), JSON.stringify(validate.errors)).toBe(true);
    expect(server.$schema).toBe(schema.$id);
    expect(readFileSync(join(ROOT, 'test/fixtures/mcp-registry/LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it('is checked for real: a name without its namespace, or a package without a version, fails', () => {
    const validate = validator();
    expect(validate({ ...server, name: 'notify-mcp' })).toBe(false);
    expect(validate({ ...server, packages: [{ ...server.packages[0], version: undefined }] })).toBe(false);
    expect(validate({ ...server, description: 'x'.repeat(101) })).toBe(false);
  });

  it("says what package.json says: mcpName, the package's name and version", () => {
    expect(manifest.mcpName).toBe(server.name);
    expect(server.version).toBe(manifest.version);
    expect(server.packages).toEqual([
      expect.objectContaining({ registryType: 'npm', identifier: manifest.name, version: manifest.version, transport: { type: 'stdio' } }),
    ]);
  });

  it('names only variables the server reads (.env.example lists each)', () => {
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    for (const v of server.packages[0].environmentVariables as { name: string }[])
      expect(example, v.name).toMatch(new RegExp(`^#? ?${v.name}=`, 'm'));
  });
});
