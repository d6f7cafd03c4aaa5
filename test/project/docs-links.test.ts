/**
 * Every link in the README and the manual resolves inside the repository: the file exists,
 * and an `#anchor` names a heading (as GitHub writes its slug) or an explicit `id` there.
 * Nothing points outside the repository, which a user's clone is all they have.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

function markdownFiles(): string[] {
  const files = ['README.md', 'bench/README.md', 'soak/README.md', 'test/README.md'];
  const walk = (dir: string) => {
    if (!existsSync(path.join(ROOT, dir))) return;
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const rel = path.join(dir, name);
      if (name === 'node_modules') continue;
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) files.push(rel);
    }
  };
  walk('docs');
  walk('packages');
  return files.filter((f) => existsSync(path.join(ROOT, f)));
}

/** Text outside fenced code blocks, where links are links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's heading slugs: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

const files = markdownFiles();

describe('documentation links', () => {
  it('finds the README and the manual', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/configuration.md');
    expect(files).toContain('packages/union/README.md');
  });

  it.each(files)('%s: every relative link and anchor resolves inside the repository', (file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1]!;
      if (/^[a-z]+:/i.test(href)) continue; // https:, mailto:
      const [target, anchor] = href.split('#') as [string, string | undefined];
      const resolved = target === '' ? file : path.normalize(path.join(path.dirname(file), target));
      if (resolved.startsWith('..')) {
        broken.push(`${href} (outside the repository)`);
        continue;
      }
      if (!existsSync(path.join(ROOT, resolved))) {
        broken.push(`${href} (no such file)`);
        continue;
      }
      if (anchor && !anchorsOf(readFileSync(path.join(ROOT, resolved), 'utf8')).has(anchor)) broken.push(`${href} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: names no folder beside the repository', (file) => {
    expect(readFileSync(path.join(ROOT, file), 'utf8')).not.toMatch(/\.\.\/shared\b/);
  });

  it('keeps the README a front door', () => {
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });
});
