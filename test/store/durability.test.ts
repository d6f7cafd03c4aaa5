/**
 * A process SIGKILLed right after it acknowledged a banner insert leaves the banner in the
 * SQLite file, and the file passes PRAGMA integrity_check. The child runs the real
 * src/store/sqlite/store.ts, transpiled to plain JS (Node 20 cannot run TypeScript).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';

const root = resolve(import.meta.dirname, '../..');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'notify-durability-'));
  const lib = join(dir, 'store');
  mkdirSync(lib);
  for (const file of readdirSync(join(root, 'src/store'), { recursive: true }) as string[]) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const out = ts.transpileModule(readFileSync(join(root, 'src/store', file), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    mkdirSync(dirname(join(lib, file)), { recursive: true });
    writeFileSync(join(lib, file.replace(/\.ts$/, '.js')), out.outputText);
  }
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  // Inserts banners one after another, acknowledging each once its insert resolved.
  writeFileSync(
    join(dir, 'child.js'),
    `import { openSqliteStore } from './store/sqlite/store.js';
const noop = () => {};
const log = { debug: noop, info: noop, warn: noop, error: noop, child: () => log };
const [file, prefix] = process.argv.slice(2);
const store = await openSqliteStore({ file, log });
for (let i = 0; ; i++) {
  const id = prefix + '-' + i;
  await store.insertBanner({ id, text: 'x'.repeat(2000), audience: 'all', severity: 'info', dedupe_key: i % 3 ? null : id,
    created_at: Date.now(), expires_at: Date.now() + 3600000, dismissed_at: null });
  process.stdout.write('ack ' + id + '\\n');
}
`,
  );
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the child until it has acknowledged `acks` inserts, then SIGKILLs it at once. */
function runAndKill(file: string, prefix: string, acks: number): Promise<string[]> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(dir, 'child.js'), file, prefix], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: string[] = [];
    let buffer = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!killed && line.startsWith('ack ')) {
          acked.push(line.slice(4));
          if (acked.length >= acks) {
            killed = true;
            child.kill('SIGKILL');
          }
        }
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolvePromise(acked);
      else reject(new Error(`child exited with ${code} before being killed: ${stderr}`));
    });
  });
}

describe('SQLite durability under SIGKILL', () => {
  it('keeps every acknowledged banner and stays intact, kill after kill', async () => {
    const file = join(dir, 'data', 'notify.db');
    const rounds = [1, 1, 25, 60, 7];
    const acked: string[] = [];
    for (const [i, n] of rounds.entries()) acked.push(...(await runAndKill(file, `bnr_round${i}`, n)));
    expect(acked).toHaveLength(rounds.reduce((a, b) => a + b, 0));

    const store = await openSqliteStore({ file, log: silentLogger });
    try {
      expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok');
      for (const id of acked) expect(await store.getBanner(id), id).not.toBeNull();
      // The store is still writable after the crashes.
      await store.insertBanner({
        id: 'bnr_after',
        text: 't',
        audience: 'all',
        severity: 'info',
        dedupe_key: null,
        created_at: 1,
        expires_at: null,
        dismissed_at: null,
      });
      expect(await store.getBanner('bnr_after')).not.toBeNull();
    } finally {
      await store.close();
    }
  });
});
