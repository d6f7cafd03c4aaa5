/**
 * The examples/tickets server end to end, as someone who takes only the union package gets
 * it: packages/union packed with `npm pack`, the example's sources and package.json copied
 * into a clean directory outside the repository, installed there (the union from its
 * tarball, the SDK and zod from the registry: nothing of notify-mcp), compiled against what
 * that install holds, then spawned over stdio and called with the v2 SDK client under every
 * profile. Nothing it generates (descriptions, schemas, errors, results) may carry a word of
 * notify-mcp's own domain: the library is generic, and this is where a leak would show.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicViolations, openAiStrictViolations, sep2106Violations } from '../compat/checkers.js';
import { ROOT } from '../helpers/cli.js';
import { npmEnv, packUnion } from '../helpers/npm.js';

const run = promisify(execFile);
const EXAMPLE = join(ROOT, 'examples/tickets');
interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  version: string;
}
const readManifest = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Manifest;

let work: string;
let app: string;
let SERVER: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tickets-clean-'));
  const pack = await packUnion(work);
  app = join(work, 'app');
  mkdirSync(join(app, 'src'), { recursive: true });
  for (const file of readdirSync(EXAMPLE).filter((f) => f.endsWith('.ts'))) copyFileSync(join(EXAMPLE, file), join(app, 'src', file));
  const manifest = readManifest(join(EXAMPLE, 'package.json'));
  manifest.dependencies!['@notify-mcp/union'] = `file:../${basename(pack.tarball)}`;
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  // The repository's compiler and Node types, as build tools; every module the example
  // imports resolves from the clean install (nothing above the temp directory has one).
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023'],
        strict: true,
        noUncheckedIndexedAccess: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        rootDir: 'src',
        outDir: 'dist',
      },
      include: ['src'],
    }),
  );
  const env = await npmEnv(work);
  await run('npm', ['install', '--no-package-lock'], { cwd: app, env, timeout: 240_000 });
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], {
    cwd: app,
    env: { PATH: env.PATH!, HOME: work },
  });
  SERVER = join(app, 'dist/server.js');
}, 300_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("examples/tickets built from the union package's tarball alone", () => {
  it('installed the union from its tarball (built code, no sources, no dependency of its own), beside zod and the SDK only', () => {
    const union = join(app, 'node_modules/@notify-mcp/union');
    expect(lstatSync(union).isSymbolicLink()).toBe(false);
    expect(readdirSync(union).sort()).toEqual(['LICENSE', 'README.md', 'dist', 'package.json']);
    const installed = readManifest(join(union, 'package.json'));
    expect(installed.version).toBe(readManifest(join(ROOT, 'packages/union/package.json')).version);
    expect(installed.dependencies).toBeUndefined();
    expect(Object.keys(installed.peerDependencies ?? {})).toEqual(['zod']);
    const top = readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'));
    for (const absent of ['notify-mcp', 'better-sqlite3', 'pg', 'twilio', '@slack', 'nodemailer', 'html-to-text', 'prom-client'])
      expect(top, absent).not.toContain(absent);
    expect(existsSync(join(app, 'node_modules/zod'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/@modelcontextprotocol/server'))).toBe(true);
  });

  it('pins the SDK and zod the repository is tested with', () => {
    const root = readManifest(join(ROOT, 'package.json')).dependencies!;
    const example = readManifest(join(EXAMPLE, 'package.json')).dependencies!;
    expect(Object.keys(example).sort()).toEqual(['@modelcontextprotocol/server', '@notify-mcp/union', 'zod']);
    for (const name of Object.keys(example)) expect(example[name], name).toBe(root[name]);
  });
});

const PROFILES = ['flat', 'nested', 'oneOf', 'per-tracker'] as const;
type Profile = (typeof PROFILES)[number];

/** notify-mcp's domain words: none may appear in what the library generates for another union. */
const DOMAIN_WORDS = /\b(send|sends|sent|sending|notif\w*|notify|email|e-mail|sms|slack|channels?|via)\b/i;

const VALID: Record<string, unknown>[] = [
  { tracker: 'jira', project: 'OPS', summary: 'Disk full on db-1' },
  { tracker: 'jira', project: 'OPS', summary: 'x', issue_type: 'Bug', labels: ['infra'], fields: { customfield_10010: 'Q3' } },
  { tracker: 'linear', team: 'ENG', title: 'Flaky test', priority: 2, estimate: 1.5 },
  { tracker: 'github', repo: 'octo-org/app', title: 'Crash on start', labels: ['bug'], assignees: ['octocat'] },
];

/** Optional fields per tracker, for the nested shape (every optional present, as null). */
const FIELDS: Record<string, string[]> = {
  jira: ['project', 'summary', 'description', 'issue_type', 'labels', 'fields'],
  linear: ['team', 'title', 'description', 'priority', 'estimate'],
  github: ['repo', 'title', 'body', 'labels', 'assignees'],
};

/** A call as a client of `profile` sends it: the tool's name and its arguments. */
function shape(profile: Profile, call: Record<string, unknown>): { name: string; arguments: Record<string, unknown> } {
  const { tracker, ...rest } = call;
  if (profile === 'per-tracker') return { name: `create_${tracker as string}_ticket`, arguments: rest };
  if (profile !== 'nested') return { name: 'create_ticket', arguments: call };
  const inner: Record<string, unknown> = { tracker };
  for (const f of FIELDS[tracker as string] ?? Object.keys(rest)) {
    const v = call[f];
    inner[f] = v === undefined ? null : f === 'fields' ? JSON.stringify(v) : v;
  }
  for (const f of Object.keys(rest)) if (!(f in inner)) inner[f] = call[f];
  return { name: 'create_ticket', arguments: { ticket: inner } };
}

interface Answer {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content: { type: string; text?: string }[];
}

describe.each(PROFILES)('examples/tickets over stdio, profile %s', (profile) => {
  let client: Client;
  let transport: StdioClientTransport;
  const generated: string[] = [];
  const call = async (c: Record<string, unknown>): Promise<Answer> => {
    const answer = (await client.callTool(shape(profile, c))) as Answer;
    generated.push(JSON.stringify(answer));
    return answer;
  };

  beforeAll(async () => {
    transport = new StdioClientTransport({ command: process.execPath, args: [SERVER, '--profile', profile], cwd: app, stderr: 'pipe' });
    client = new Client({ name: 'tickets-e2e', version: '1.0.0' });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists the tools of that profile, each meeting the rules its clients hold', async () => {
    const { tools } = await client.listTools();
    generated.push(JSON.stringify(tools));
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      profile === 'per-tracker' ? ['create_jira_ticket', 'create_linear_ticket', 'create_github_ticket'] : ['create_ticket'],
    );
    for (const tool of tools) {
      if (profile === 'flat' || profile === 'per-tracker') expect(anthropicViolations(tool as never)).toEqual([]);
      if (profile === 'nested') expect(openAiStrictViolations(tool.inputSchema as never)).toEqual([]);
      if (profile === 'oneOf') expect(sep2106Violations(tool.inputSchema as never, 'tracker')).toEqual([]);
      expect(tool.description).toMatch(/Dry run: nothing is created/);
    }
    if (profile !== 'per-tracker') {
      // The flat shape's schema leaves the fields' words out, so its description says them; a
      // limit its schema holds for one tracker alone (jira's summary, linear's priority) is left
      // to the schema, while one that differs between trackers (a merged field) is said.
      const words = profile === 'flat';
      expect(tools[0]!.description).toContain(
        `jira: takes project (${words ? 'project key, ' : ''}e.g. OPS) and summary${words ? ';' : ' (1-255 characters)'}`,
      );
      expect(tools[0]!.description).toContain(
        words
          ? 'optional description (Markdown; at most 100,000 characters), priority (0 none, 1 urgent, 4 low) or estimate (points)'
          : 'optional description (at most 100,000 characters), priority (a whole number from 0 to 4) or estimate (from 0 to 64)',
      );
      if (words) {
        const props = tools[0]!.inputSchema.properties as Record<string, { maxLength?: number; maximum?: number }>;
        expect([props.summary?.maxLength, props.priority?.maximum, props.estimate?.maximum]).toEqual([255, 4, 64]);
      }
    }
  });

  it('answers every valid call with the request the tracker API would get', async () => {
    for (const c of VALID) {
      const answer = await call(c);
      expect(answer.isError, JSON.stringify(answer)).toBeFalsy();
      expect(answer.structuredContent).toMatchObject({ tracker: c.tracker, status: 'dry_run', request: { method: 'POST' } });
    }
    const jira = await call(VALID[1]!);
    expect(jira.structuredContent!.request.body.fields).toMatchObject({ customfield_10010: 'Q3', labels: ['infra'] });
  });

  it("answers bad calls with coded, pointed errors in the union's own words", async () => {
    const base = profile === 'nested' ? '/ticket' : '';
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [
        { tracker: 'linear', team: 'ENG', title: 'x', repo: 'a/b' },
        { code: 'FIELD_NOT_ON_TRACKER', path: `${base}/repo` },
      ],
      [
        { tracker: 'jira', project: 'ops', summary: 'x' },
        { code: 'INVALID_FIELD', path: `${base}/project` },
      ],
      [
        { tracker: 'github', repo: 'a/b', title: 'x'.repeat(257) },
        { code: 'TOO_LONG', path: `${base}/title` },
      ],
      [
        { tracker: 'linear', team: 'ENG', title: 'x', priority: 9 },
        { code: 'INVALID_FIELD', path: `${base}/priority` },
      ],
      [
        { tracker: 'linear', title: 'x' },
        { code: 'MISSING_FIELD', path: `${base}/team` },
      ],
    ];
    if (profile !== 'per-tracker')
      cases.push([
        { tracker: 'trello', title: 'x' },
        { code: 'INVALID_TRACKER', path: `${base}/tracker` },
      ]);
    for (const [c, expected] of cases) {
      const answer = await call(c);
      expect(answer.isError).toBe(true);
      expect(answer.structuredContent!.error).toMatchObject(expected);
    }
    const notOn = (await call(cases[0]![0])).structuredContent!.error.message as string;
    // Per tracker there is no tracker to set: the advice names the tool.
    const fix = profile === 'per-tracker' ? 'call \\w+github\\w*' : 'set tracker to github';
    expect(notOn).toMatch(
      new RegExp(`^Drop repo, or ${fix}: linear takes team \\(matching .*\\), title \\(1-255 characters\\), .* only\\.$`),
    );
    if (profile === 'nested') {
      const bad = await client.callTool({
        name: 'create_ticket',
        arguments: { ticket: { tracker: 'jira', project: 'OPS', summary: 'x', fields: '{oops' } },
      });
      generated.push(JSON.stringify(bad));
      expect((bad.structuredContent as Answer['structuredContent'])!.error).toMatchObject({
        code: 'INVALID_FIELD',
        path: '/ticket/fields',
      });
    }
    const hostile = await client.callTool({
      name: shape(profile, VALID[0]!).name,
      arguments: { ['__proto__']: 1, toString: 'x' } as never,
    });
    generated.push(JSON.stringify(hostile));
    expect(hostile.isError).toBe(true);
  });

  it('generates no notify-mcp word in anything it served', () => {
    expect(
      'Sends one notification by email. Every channel also takes x. Set via to sms'.match(new RegExp(DOMAIN_WORDS, 'gi')),
    ).toHaveLength(6);
    expect(generated.length).toBeGreaterThan(5);
    for (const text of generated) expect(text.match(DOMAIN_WORDS)?.[0], text.slice(0, 300)).toBeUndefined();
  });
});
