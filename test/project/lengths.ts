/**
 * Function and file lengths of the project's source, read with the TypeScript compiler the
 * build already uses: every function-like node (declarations, methods, arrows, function
 * expressions), named by the chain of named functions, classes and variables around it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const MAX_FUNCTION_LINES = 80;
export const MAX_FILE_LINES = 400;

export interface Lengths {
  /** `file#outer/inner` → lines, for every function over MAX_FUNCTION_LINES. */
  functions: Record<string, number>;
  /** file → lines, for every file over MAX_FILE_LINES. */
  files: Record<string, number>;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts)$/.test(e.name) && !/\.test\.ts$|\.d\.(m)?ts$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

function nameOf(node: ts.Node): string | undefined {
  if (
    (ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) &&
    node.name
  )
    return node.name.getText();
  if ((ts.isGetAccessor(node) || ts.isSetAccessor(node) || ts.isPropertyAssignment(node) || ts.isPropertyDeclaration(node)) && node.name)
    return node.name.getText();
  if (ts.isVariableDeclaration(node)) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return undefined;
}

const isFunction = (n: ts.Node): n is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isArrowFunction(n) ||
  ts.isFunctionExpression(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isGetAccessor(n) ||
  ts.isSetAccessor(n);

export function measure(root: string, dirs: readonly string[], skip: (file: string) => boolean = () => false): Lengths {
  const out: Lengths = { functions: {}, files: {} };
  for (const file of dirs.flatMap((d) => sources(join(root, d)))) {
    const rel = relative(root, file);
    if (skip(rel)) continue;
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const lines = source.getLineAndCharacterOfPosition(text.length).line + (text.endsWith('\n') ? 0 : 1);
    if (lines > MAX_FILE_LINES) out.files[rel] = lines;
    const seen = new Map<string, number>();
    const visit = (node: ts.Node, path: string[]) => {
      const name = nameOf(node);
      const here = name ? [...path, name] : path;
      if (isFunction(node) && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const n = end - start + 1;
        if (n > MAX_FUNCTION_LINES) {
          const base = `${rel}#${here.join('/') || '<anonymous>'}`;
          const k = (seen.get(base) ?? 0) + 1;
          seen.set(base, k);
          out.functions[k === 1 ? base : `${base}#${k}`] = n;
        }
      }
      ts.forEachChild(node, (c) => visit(c, here));
    };
    visit(source, []);
  }
  return out;
}
