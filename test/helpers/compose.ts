/**
 * docker-compose.yml as the tests read it (parsed with `yaml`), and the environment Compose
 * would give the app container: the image's ENV, then `env_file` (.env, made from
 * .env.example as the README says), then `environment`, with `${VAR:-default}` and
 * `${VAR:?message}` interpolated from the values a test supplies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './cli.js';

export interface ComposeService {
  build?: string | { context: string; dockerfile?: string };
  image?: string;
  command?: unknown;
  env_file?: string | (string | { path: string })[];
  environment?: Record<string, string> | string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string };
  volumes?: string[];
}
export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

export const APP = 'notify-mcp';

export function readCompose(): ComposeFile {
  return parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;
}

/** `KEY=value` lines of an env file (Compose's format for these simple values). */
export function readEnvFile(path: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

/** Compose's interpolation of `${VAR}`, `${VAR:-default}` and `${VAR:?error}`. */
export function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{([A-Z][A-Z0-9_]*)(?:(:-|:\?)([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = vars[name];
    if (v !== undefined && v !== '') return v;
    if (op === ':?') throw new Error(`compose: ${name} is required: ${arg}`);
    return op === ':-' ? arg! : '';
  });
}

export function serviceEnvironment(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) throw new Error('environment as a list is not expected here');
  return env;
}

/** The app container's environment: image ENV < env_file < environment (interpolated from `vars`, Compose's own .env). */
export function appEnvironment(
  imageEnv: Record<string, string>,
  envFile: Record<string, string>,
  vars: Record<string, string>,
): Record<string, string> {
  const compose = readCompose().services[APP]!;
  const fromCompose = Object.fromEntries(Object.entries(serviceEnvironment(compose)).map(([k, v]) => [k, interpolate(String(v), vars)]));
  return { ...imageEnv, ...envFile, ...fromCompose };
}
