/**
 * A reader of this project's Dockerfile, enough for its tests: instructions per stage, with
 * `\` continuations joined and comments dropped. Not a general Dockerfile parser (no heredocs,
 * no escape directive); the tests fail loudly on anything they do not expect.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export interface Instruction {
  op: string;
  args: string;
}
export interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

export function readDockerfile(path = join(ROOT, 'Dockerfile')): Stage[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    if (/^\s*#/.test(raw)) continue; // comments, inside a continuation too
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1).trim() + ' ';
      continue;
    }
    const full = (pending + line.trim()).trim();
    pending = '';
    if (full) lines.push(full);
  }
  const stages: Stage[] = [];
  for (const line of lines) {
    const m = /^([A-Z]+)\s+(.*)$/s.exec(line);
    if (!m) throw new Error(`Dockerfile line not understood: ${line}`);
    const [, op, args] = m as unknown as [string, string, string];
    if (op === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) throw new Error(`FROM not understood: ${args}`);
      stages.push({ name: from[2] ?? String(stages.length), from: from[1]!, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`${op} before FROM`);
      stage.instructions.push({ op, args });
    }
  }
  return stages;
}

export function stage(stages: Stage[], name: string): Stage {
  const s = stages.find((x) => x.name === name);
  if (!s) throw new Error(`Dockerfile has no stage "${name}" (has ${stages.map((x) => x.name).join(', ')})`);
  return s;
}

export const all = (s: Stage, op: string): string[] => s.instructions.filter((i) => i.op === op).map((i) => i.args);

/** The exec form of CMD or HEALTHCHECK … CMD: a JSON array. */
export function execForm(args: string): string[] {
  const json = args.replace(/^(--\S+\s+)*CMD\s+/, '');
  return JSON.parse(json) as string[];
}

/** `ENV A=1 B=2` (no quoting needed in this project). */
export function envOf(s: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const args of all(s, 'ENV'))
    for (const pair of args.split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`ENV not understood: ${args}`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  return env;
}
