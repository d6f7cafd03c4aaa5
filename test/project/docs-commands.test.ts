/**
 * Every command line the docs and the README show (`notify-mcp …`, `node dist/cli.js …`, in
 * code blocks and code spans) names a command `--help` lists, with flags that command takes.
 * A new user found `notify-mcp serve --http` in docs/console.md, which --help never listed.
 * The help text is read from src/cli/main.ts (importing it would run the CLI).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const main = readFileSync(join(root, 'src/cli/main.ts'), 'utf8');
const USAGE = /const USAGE = `([\s\S]*?)`;/.exec(main)![1]!;

interface Help {
  /** command (or '' for the server itself, `audit verify` for a subcommand) → its flags */
  commands: Map<string, Set<string>>;
  /** flags every command takes */
  global: Set<string>;
  /** flags followed by a value (`--limit N`) */
  valued: Set<string>;
}

/** The commands and flags of the usage text: each `  notify-mcp …` line and its continuation lines. */
function readHelp(usage: string): Help {
  const commands = new Map<string, Set<string>>();
  const global = new Set<string>();
  const valued = new Set([...usage.matchAll(/(--[a-z][a-z-]*) (?:[A-Z]+|<\w+>)\b/g)].map((m) => m[1]!));
  let current: Set<string> | undefined;
  let options = false;
  for (const line of usage.split('\n')) {
    const flags = [...line.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]);
    const usageLine = /^ {2}notify-mcp(?: (?!-)([a-z]+)(?: ([a-z]+))?)?/.exec(line);
    if (/^Options for every command/.test(line)) options = true;
    if (usageLine && !options) {
      const name = [usageLine[1], usageLine[1] === 'audit' ? usageLine[2] : undefined].filter(Boolean).join(' ');
      current = commands.get(name) ?? new Set();
      commands.set(name, current);
      // `notify-mcp --help | --version`: flags of every command.
      if (name === '' && flags.includes('--help')) for (const f of flags) global.add(f);
      else for (const f of flags) current.add(f);
    } else if (/^ {6,}/.test(line) && current && !options) {
      for (const f of flags) current.add(f);
    } else if (options) {
      for (const f of flags) global.add(f);
    }
  }
  return { commands, global, valued };
}

/** Why a shown command line does not match the help, or undefined. */
function problemWith(args: string[], help: Help): string | undefined {
  const words = args.filter((a) => !/^[[\]|]+$/.test(a)).map((a) => a.replace(/^\[+|\]+$/g, ''));
  let command: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.startsWith('-')) {
      const flag = w.split('=')[0]!;
      const own = help.commands.get(command ?? '') ?? new Set();
      if (!own.has(flag) && !help.global.has(flag))
        return `${flag} is not a flag of ${command ? `\`notify-mcp ${command}\`` : '`notify-mcp`'} in --help`;
      if (help.valued.has(flag) && !w.includes('=')) i++;
      continue;
    }
    if (command !== undefined) continue; // a positional: a file, a channel…
    // `audit verify`: a command of two words.
    const two = `${w} ${words[i + 1] ?? ''}`;
    if (help.commands.has(two)) {
      command = two;
      i++;
    } else if (help.commands.has(w)) command = w;
    else return `"${w}" is not a command in --help`;
  }
  return undefined;
}

/**
 * A command line: the CLI in command position (a line's or span's start, after `&&`, `;`, `|`,
 * `(` or a `$ ` prompt, past `VAR=value` assignments and `npx [-y]`), then its words up to a
 * comment, a pipe or the span's end. `docker build -t notify-mcp .` names an image, not the CLI.
 */
const CLI =
  /(?:^|[;&|(]\s*|\$\s+)(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:npx\s+(?:-y\s+)?)?(?:notify-mcp(?:@[\w.-]+)?|node dist\/cli\.js)(?=\s|$)((?:[ \t]+[^\s#;&|)`]+)*)/gm;

/** Every command line a Markdown file shows, with where: fenced code lines and code spans. */
function shownCommands(markdown: string): { line: number; text: string; args: string[] }[] {
  const found: { line: number; text: string; args: string[] }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return;
    }
    const pieces = fenced ? [line] : [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    for (const piece of pieces) {
      // JSON and other config (`"command": "notify-mcp"`) are not command lines.
      if (/^\s*["{[]/.test(piece)) continue;
      for (const m of piece.matchAll(CLI)) found.push({ line: i + 1, text: m[0].trim(), args: m[1]!.trim().split(/\s+/).filter(Boolean) });
    }
  });
  return found;
}

const docs = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f)),
];

describe('commands shown in the docs exist in --help', () => {
  const help = readHelp(USAGE);

  it('reads the help: its commands and their flags', () => {
    expect([...help.commands.keys()].sort()).toEqual(
      ['', 'answer', 'audit export', 'audit verify', 'bundle', 'contacts', 'doctor', 'outbox', 'schema', 'worker'].sort(),
    );
    expect(help.commands.get('outbox')).toEqual(new Set(['--limit', '--waiting']));
    expect(help.global).toEqual(new Set(['--help', '--version', '--env-file']));
  });

  it('catches what it checks', () => {
    expect(problemWith(['serve', '--http'], help)).toMatch(/"serve" is not a command/);
    expect(problemWith(['outbox', '--waitng'], help)).toMatch(/--waitng is not a flag of `notify-mcp outbox`/);
    expect(problemWith(['schema', '--waiting'], help)).toMatch(/--waiting is not a flag of `notify-mcp schema`/);
    expect(problemWith(['--http', '--port', '8787', '--host', '127.0.0.1'], help)).toBeUndefined();
    expect(problemWith(['audit', 'verify', '--json'], help)).toBeUndefined();
    expect(
      shownCommands(
        'Run `notify-mcp serve --http`, or:\n```sh\nNOTIFY_X=1 npx -y notify-mcp outbox --limit 5 | jq .  # latest\n```\n`"command": "notify-mcp"`',
      ),
    ).toEqual([
      { line: 1, text: 'notify-mcp serve --http', args: ['serve', '--http'] },
      { line: 3, text: 'NOTIFY_X=1 npx -y notify-mcp outbox --limit 5', args: ['outbox', '--limit', '5'] },
    ]);
  });

  for (const file of docs) {
    const shown = shownCommands(readFileSync(file, 'utf8'));
    it(`${file.slice(root.length + 1)}: ${shown.length} command lines`, () => {
      const problems = shown.flatMap((c) => {
        const problem = problemWith(c.args, help);
        return problem ? [`line ${c.line}: \`${c.text}\`: ${problem}`] : [];
      });
      expect(problems).toEqual([]);
    });
  }

  it('finds command lines to check', () => {
    expect(docs.flatMap((f) => shownCommands(readFileSync(f, 'utf8'))).length).toBeGreaterThan(20);
  });
});
