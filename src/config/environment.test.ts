import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { environment, handOverEnvironment, takeEnvironment } from './environment.js';

const dirs: string[] = [];
function envFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'env-file-'));
  dirs.push(dir);
  const file = join(dir, '.env');
  writeFileSync(file, text);
  return file;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  takeEnvironment(); // nothing handed over leaks into the next test
});

describe('the stdio entry hands its reading of the environment to main', () => {
  it('main takes what the entry read for the same --env-file, without reading the file again', () => {
    const file = envFile('NOTIFY_HANDOVER_PROBE=from-file\n');
    handOverEnvironment(file, environment(file));
    rmSync(file);
    expect(takeEnvironment(file).NOTIFY_HANDOVER_PROBE).toBe('from-file');
  });

  it('takes it once: a second reading reads the file', () => {
    const file = envFile('NOTIFY_HANDOVER_PROBE=first\n');
    handOverEnvironment(file, environment(file));
    takeEnvironment(file);
    writeFileSync(file, 'NOTIFY_HANDOVER_PROBE=second\n');
    expect(takeEnvironment(file).NOTIFY_HANDOVER_PROBE).toBe('second');
  });

  it('reads for itself when main was given another file than the entry read', () => {
    const a = envFile('NOTIFY_HANDOVER_PROBE=a\n');
    const b = envFile('NOTIFY_HANDOVER_PROBE=b\n');
    handOverEnvironment(a, environment(a));
    expect(takeEnvironment(b).NOTIFY_HANDOVER_PROBE).toBe('b');
  });
});
