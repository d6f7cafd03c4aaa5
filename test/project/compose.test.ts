/**
 * docker-compose.yml, parsed (no Docker engine runs here): the app is built from the
 * Dockerfile (no bind-mounted checkout, no `npm ci` on `up`), reads .env, reaches PostgreSQL
 * and Mailpit by their service names once they are up, serves HTTP beyond loopback with
 * tokens and allowed hosts, and its environment is one the server starts with. The image
 * itself is replayed in test/project/dockerfile.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { assertBindable } from '../../src/transports/http/listener.js';
import { ROOT } from '../helpers/cli.js';
import { APP, appEnvironment, interpolate, readCompose, readEnvFile, serviceEnvironment } from '../helpers/compose.js';
import { all, envOf, execForm, readDockerfile } from '../helpers/dockerfile.js';

const compose = readCompose();
const app = compose.services[APP]!;
const runtime = readDockerfile().at(-1)!;
const example = readEnvFile(join(ROOT, '.env.example'));
// Documented there, set or (allowlists) commented out.
const documented = new Set([...readFileSync(join(ROOT, '.env.example'), 'utf8').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));
const TOKEN = 'compose-test-token-0123456789';

/** What the Dockerfile's CMD binds: host and port. */
function cmdBind(): { host: string; port: string } {
  const cmd = execForm(all(runtime, 'CMD').at(-1)!);
  return { host: cmd[cmd.indexOf('--host') + 1]!, port: cmd[cmd.indexOf('--port') + 1]! };
}

describe('docker-compose.yml', () => {
  it('has the app, PostgreSQL and Mailpit', () => {
    expect(Object.keys(compose.services).sort()).toEqual([APP, 'mailpit', 'postgres'].sort());
    expect(compose.services.mailpit!.image).toMatch(/^axllent\/mailpit:v\d/);
    expect(compose.services.postgres!.image).toMatch(/^postgres:\d+$/);
  });

  it('builds the app from the Dockerfile: no image to run npm in, no bind-mounted checkout, no command', () => {
    const context = typeof app.build === 'string' ? app.build : app.build?.context;
    expect(context).toBe('.');
    expect(existsSync(join(ROOT, typeof app.build === 'object' && app.build.dockerfile ? app.build.dockerfile : 'Dockerfile'))).toBe(true);
    expect(app.image).toBeUndefined();
    expect(app.command).toBeUndefined(); // the image's CMD
    expect(app.volumes ?? []).toEqual([]);
  });

  it('reads .env', () => {
    const files = [app.env_file ?? []].flat().map((f) => (typeof f === 'string' ? f : f.path));
    expect(files).toEqual(['.env']);
  });

  it('sets only variables the server reads, and wires the store and the mail sink by service name', () => {
    const env = serviceEnvironment(app);
    for (const k of Object.keys(env)) expect(documented, k).toContain(k);
    const pg = compose.services.postgres!.environment as Record<string, string>;
    const db = new URL(env.DATABASE_URL!);
    expect([db.protocol, db.hostname, db.port, db.username, db.password, db.pathname]).toEqual([
      'postgres:',
      'postgres',
      '5432',
      pg.POSTGRES_USER,
      pg.POSTGRES_PASSWORD,
      `/${pg.POSTGRES_DB}`,
    ]);
    expect(env.SMTP_URL).toBe('smtp://mailpit:1025');
    // The token cannot be left out: Compose stops with the message before starting anything.
    expect(env.NOTIFY_HTTP_TOKENS).toMatch(/^\$\{NOTIFY_HTTP_TOKENS:\?.*NOTIFY_HTTP_TOKENS/);
    expect(() => interpolate(env.NOTIFY_HTTP_TOKENS!, {})).toThrow(/NOTIFY_HTTP_TOKENS is required/);
    // Containers on the Compose network reach the app by its service name.
    expect(interpolate(env.NOTIFY_HTTP_ALLOWED_HOSTS!, {}).split(',')).toContain(APP);
  });

  it("gives the app an environment the server starts with, bound where the image's CMD binds", () => {
    // A user's first run: .env copied from .env.example, with a token set.
    const vars = { ...example, NOTIFY_HTTP_TOKENS: `me:${TOKEN}` };
    const env = appEnvironment(envOf(runtime), vars, vars);
    const config = loadConfig(env);
    const { host } = cmdBind();
    expect(host).toBe('0.0.0.0');
    expect(() => assertBindable(config, host)).not.toThrow();
    expect(config.databaseUrl).toMatch(/@postgres:5432\//);
    // .env does not move the store off the image's volume (an empty NOTIFY_DATA_DIR would).
    expect(all(runtime, 'VOLUME')).toEqual([JSON.stringify([config.dataDir])]);
    expect(config.http.allowedHosts).toContain(APP);
    expect(config.channels.find((c) => c.name === 'email')?.live).toBe(true);
    // The same without a token would not start: Compose's `:?` stops it first.
    expect(() => appEnvironment(envOf(runtime), example, example)).toThrow(/NOTIFY_HTTP_TOKENS is required/);
  });

  it('publishes the bound port on loopback, at the same number (the Host header carries it)', () => {
    const { port } = cmdBind();
    expect(app.ports).toEqual([`127.0.0.1:${port}:${port}`]);
    expect(compose.services.mailpit!.ports).toEqual(['127.0.0.1:8025:8025']);
  });

  it('starts the app once PostgreSQL is healthy and Mailpit has started; the app is health-checked by its image', () => {
    expect(app.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, mailpit: { condition: 'service_started' } });
    expect(JSON.stringify(compose.services.postgres!.healthcheck!.test)).toMatch(/pg_isready -U notify -d notify/);
    expect(app.healthcheck).toBeUndefined(); // the Dockerfile's HEALTHCHECK applies
    expect(all(runtime, 'HEALTHCHECK').join(' ')).toMatch(/\/healthz/);
    expect(compose.services.postgres!.volumes).toEqual(['pgdata:/var/lib/postgresql/data']);
    expect(compose.volumes).toHaveProperty('pgdata');
  });
});
