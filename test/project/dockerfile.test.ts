/**
 * The Dockerfile, read and replayed as far as a machine without a Docker engine allows. Its
 * stages are checked for what they must be (dev tools only in the build, production
 * dependencies only at run time, non-root, health-checked); then the `deps` and `runtime`
 * stages are replayed in a clean directory: the deps stage's own RUN line with the files its
 * COPY names, the runtime stage's COPYs, ENV, and CMD (port 0 instead of 8787), with the
 * environment docker-compose.yml gives the app (.env from .env.example, PostgreSQL when it
 * answers, a real SMTP server standing in for Mailpit). The build stage is the project's own
 * `npm ci` + `npm run build`, which `npm test` has just run: its dist/ is the one copied.
 *
 * better-sqlite3's install script is the one step not replayed by default: with no prebuilt
 * binary to download here it compiles SQLite (about 3 minutes on this machine), so the
 * replay takes the binary the project's own `npm ci` built from the same locked version for
 * the same Node. NOTIFY_TEST_NATIVE_BUILD=1 replays it too.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT } from '../helpers/cli.js';
import { APP, appEnvironment, readEnvFile } from '../helpers/compose.js';
import { all, envOf, execForm, readDockerfile, stage, type Stage } from '../helpers/dockerfile.js';
import { npmEnv } from '../helpers/npm.js';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import type { ToolOutcome } from '../helpers/mcp-cli.js';

const run = promisify(execFile);
const stages = readDockerfile();
const build = stage(stages, 'build');
const deps = stage(stages, 'deps');
const runtime = stages.at(-1)!;
const COMPILE_NATIVE = process.env.NOTIFY_TEST_NATIVE_BUILD === '1';
// Compose gives the app PostgreSQL; without one answering here, the replay uses SQLite.
const pgUnavailable = await postgresSkipReason('dockerfile replay on PostgreSQL (SQLite instead)');

describe('Dockerfile stages', () => {
  it('builds with dev dependencies, installs production ones from the lockfile with npm ci --omit=dev', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
    const buildRuns = all(build, 'RUN');
    expect(buildRuns.some((r) => /^npm ci\b/.test(r) && !r.includes('--omit'))).toBe(true);
    expect(buildRuns).toContain('npm run build');
    // The union workspace's manifest too: npm ci installs the workspace the lockfile names.
    expect(all(deps, 'COPY')).toEqual(['package.json package-lock.json ./', 'packages/union/package.json ./packages/union/']);
    expect(all(build, 'COPY').slice(0, 2)).toEqual(all(deps, 'COPY'));
    expect(all(build, 'COPY')).toContain('packages/union ./packages/union');
    for (const s of stages) expect(all(s, 'WORKDIR'), s.name).toEqual(['/app']);
    expect(all(deps, 'RUN')).toHaveLength(1);
    expect(all(deps, 'RUN')[0]).toMatch(/^npm ci --omit=dev\b/);
  });

  it('runs on a slim image as a non-root user, with production dependencies only, a /healthz check and HTTP on 0.0.0.0', () => {
    expect(runtime.from).toMatch(/^node:20[\w.-]*-slim$/);
    const copies = all(runtime, 'COPY');
    expect(copies.filter((c) => c.includes('node_modules'))).toEqual(['--from=deps /app/node_modules ./node_modules']);
    expect(copies).toContain('--from=build /app/dist ./dist');
    expect(all(runtime, 'RUN').join('\n')).not.toMatch(/\bnpm\b/);
    const user = all(runtime, 'USER').at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime.instructions.findIndex((i) => i.op === 'USER')).toBeLessThan(runtime.instructions.findIndex((i) => i.op === 'CMD'));
    expect(execForm(all(runtime, 'HEALTHCHECK')[0]!).join(' ')).toContain('http://127.0.0.1:8787/healthz');
    expect(execForm(all(runtime, 'CMD')[0]!)).toEqual(['node', 'dist/cli.js', '--http', '--host', '0.0.0.0', '--port', '8787']);
  });
});

/** Replays a stage's COPY lines into `dest` (its WORKDIR), sources from the build context or an earlier stage's dir. */
function replayCopies(s: Stage, dest: string, stageDirs: Record<string, string>): void {
  for (const args of all(s, 'COPY')) {
    const words = args.split(/\s+/);
    const from = words[0]!.startsWith('--from=') ? words.shift()!.slice('--from='.length) : undefined;
    const target = join(dest, words.pop()!);
    const base = from === undefined ? ROOT : stageDirs[from];
    if (!base) throw new Error(`COPY --from=${from}: no replayed stage`);
    for (const src of words) {
      const path = from === undefined ? join(base, src) : join(base, src.replace(/^\/app\/?/, ''));
      const to = words.length > 1 || target.endsWith('/') ? join(target, src.split('/').pop()!) : target;
      // The deps stage was replayed in the app dir itself: its node_modules is already in place.
      if (path !== to) cpSync(path, to, { recursive: true });
    }
  }
}

describe('runtime stage replayed in a clean directory, with the compose environment', () => {
  let dir: string;
  let appDir: string;
  let depsDir: string;
  let server: ChildProcess | undefined;
  let base: string;
  let smtp: TestSmtpServer;
  let schema: string | undefined;
  let baseEnv: Record<string, string>;
  let stderr = '';
  const token = `compose-${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
    dir = mkdtempSync(join(tmpdir(), 'notify-docker-'));
    // Both stages' WORKDIR is /app: the deps stage is replayed in the app dir, which spares
    // copying its node_modules over (COPY --from=deps) in a second pass.
    appDir = join(dir, 'app');
    depsDir = appDir;
    mkdirSync(appDir);

    // deps stage: its COPY, then its RUN line exactly as written.
    replayCopies(deps, depsDir, {});
    const env = await npmEnv(dir, { scripts: COMPILE_NATIVE });
    const started = Date.now();
    await run('sh', ['-c', all(deps, 'RUN')[0]!], { cwd: depsDir, env, timeout: COMPILE_NATIVE ? 590_000 : 170_000 });
    process.stderr.write(`dockerfile replay: deps stage took ${Date.now() - started} ms\n`);
    const sqlite = join(depsDir, 'node_modules/better-sqlite3');
    if (!COMPILE_NATIVE) {
      const version = (p: string) => (JSON.parse(readFileSync(join(p, 'package.json'), 'utf8')) as { version: string }).version;
      expect(version(sqlite)).toBe(version(join(ROOT, 'node_modules/better-sqlite3')));
      cpSync(
        join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
        join(sqlite, 'build/Release/better_sqlite3.node'),
      );
    }

    // runtime stage: its COPYs; its one RUN makes the data dir, which ENV points elsewhere here.
    replayCopies(runtime, appDir, { deps: depsDir, build: ROOT });
    expect(all(runtime, 'RUN')).toEqual(['mkdir -p /data && chown node:node /data']);
    mkdirSync(join(dir, 'data'));

    smtp = await startSmtpServer();
    const vars = { ...readEnvFile(join(ROOT, '.env.example')), NOTIFY_HTTP_TOKENS: `ops:${token}` };
    const composed = appEnvironment(envOf(runtime), vars, vars);
    // Services by their compose names become this machine's: PostgreSQL when it answers, and
    // a real SMTP server for Mailpit.
    if (pgUnavailable === null) {
      schema = `notify_docker_${randomBytes(6).toString('hex')}`;
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`CREATE SCHEMA ${schema}`);
      await c.end();
      const url = new URL(PG_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      composed.DATABASE_URL = url.toString();
    } else {
      delete composed.DATABASE_URL;
    }
    expect(composed.SMTP_URL).toBe('smtp://mailpit:1025');
    composed.SMTP_URL = smtp.url;
    baseEnv = { ...composed, PATH: process.env.PATH ?? '', HOME: dir, NOTIFY_DATA_DIR: join(dir, 'data') };

    const cmd = execForm(all(runtime, 'CMD')[0]!);
    cmd[cmd.indexOf('--port') + 1] = '0'; // tests bind ephemeral ports
    server = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), {
      cwd: appDir,
      env: baseEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "serving http" line: ${stderr}`)), 20_000);
      server!.on('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
      server!.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        const m = /"msg":"serving http","url":"http:\/\/([^/"]+)\/mcp"/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${m[1]!.split(':').pop()}`);
        }
      });
    });
  }, 600_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    await smtp?.close();
    if (schema) {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installed production dependencies only', () => {
    for (const prod of ['@modelcontextprotocol/server', 'better-sqlite3', 'pg', 'nodemailer'])
      expect(existsSync(join(depsDir, 'node_modules', prod)), prod).toBe(true);
    // The union workspace is linked, and the image holds the built package the link names.
    expect(lstatSync(join(depsDir, 'node_modules/@notify-mcp/union')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(appDir, 'node_modules/@notify-mcp/union/dist/index.js'))).toBe(true);
    for (const dev of ['typescript', 'vitest', 'rolldown', 'yaml', '@stoplight/prism-cli'])
      expect(existsSync(join(depsDir, 'node_modules', dev)), dev).toBe(false);
  });

  it('resolves notify-mcp/union in the image, to the built union package', async () => {
    const probe = "import('notify-mcp/union').then((u) => process.stdout.write(typeof u.validateUnionCall))";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], {
      cwd: appDir,
      env: { PATH: process.env.PATH ?? '', HOME: dir },
    });
    expect(stdout).toBe('function');
  });

  it('bound 0.0.0.0 with the store compose gives it', () => {
    expect(stderr).toMatch(/"msg":"serving http","url":"http:\/\/0\.0\.0\.0:\d+\/mcp"/);
    expect(stderr).not.toMatch(/"level":"error"/);
  });

  it("answers /healthz, and the image's HEALTHCHECK command passes on it (and fails with no server)", async () => {
    const port = new URL(base).port;
    const health = await fetch(`${base}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { ok: true }]);
    const check = execForm(all(runtime, 'HEALTHCHECK')[0]!).map((a) => a.replace('127.0.0.1:8787', `127.0.0.1:${port}`));
    await expect(run(process.execPath, check.slice(1), { env: baseEnv })).resolves.toBeDefined();
    const down = execForm(all(runtime, 'HEALTHCHECK')[0]!).map((a) => a.replace('127.0.0.1:8787', '127.0.0.1:9'));
    await expect(run(process.execPath, down.slice(1), { env: baseEnv })).rejects.toMatchObject({ code: 1 });
  });

  it('answers the Host other containers use (the service name), and refuses a foreign one', async () => {
    const port = new URL(base).port;
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/healthz', headers: { Host: host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await statusFor(`${APP}:8787`)).toBe(200);
    expect(await statusFor('evil.example:8787')).toBe(403);
  });

  it('needs the bearer token on /mcp, and sends with it: email live to the SMTP server, SMS in dry-run', async () => {
    const anonymous = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);

    const client = new Client({ name: 'compose-replay', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    try {
      const email = (await client.callTool({
        name: 'send_notification',
        arguments: { via: 'email', to: 'oncall@example.com', subject: 'Compose replay', body_html: '<p>From the replayed image.</p>' },
      })) as ToolOutcome;
      expect(email.isError, JSON.stringify(email)).toBeFalsy();
      expect(email.structuredContent).toMatchObject({ via: 'email', status: 'sent' });
      expect(smtp.received.at(-1)?.to).toEqual(['oncall@example.com']);
      const sms = (await client.callTool({
        name: 'send_notification',
        arguments: { via: 'sms', to: '+14155550100', body: 'replayed' },
      })) as ToolOutcome;
      expect(sms.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
    } finally {
      await client.close();
    }
    // The token's client name is on the delivery log line.
    expect(stderr).toMatch(/"client":"ops"/);
  });

  it('refuses to start on 0.0.0.0 without tokens, saying what to set', async () => {
    const { NOTIFY_HTTP_TOKENS: _, ...noTokens } = baseEnv;
    const cmd = execForm(all(runtime, 'CMD')[0]!);
    cmd[cmd.indexOf('--port') + 1] = '0';
    const failed = await run(process.execPath, cmd.slice(1), { cwd: appDir, env: noTokens }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toMatch(/NOTIFY_HTTP_TOKENS/);
  });
});
