import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The house's length for a function: 80 lines in the surfaces (`src/http`, `src/cli`), where a
 * long function is a dispatch growing back, and 150 elsewhere. A function over it is split where a
 * reader would want it split, not let through.
 */
const root = join(__dirname, '..', '..');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (path.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Functions of `text` (the file `name`, from the root) longer than its folder allows, as `file:line (n lines)`. */
function tooLong(name: string, text: string): string[] {
  const limit = /^src\/(http|cli)\//.test(name) ? 80 : 150;
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const isFunction =
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isConstructorDeclaration(node);
    if (isFunction && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > limit) found.push(`${name}:${first + 1} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it('has no function over 80 lines in src/http and src/cli, nor over 150 anywhere in src', () => {
  const files = sourceFiles(join(root, 'src'));
  expect(files.flatMap((f) => tooLong(relative(root, f), readFileSync(f, 'utf8')))).toEqual([]);
});

it('finds a function over the length, by its folder', () => {
  const fn = (lines: number) =>
    `export function f() {\n${Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n')}\n}\n`;
  expect(tooLong('src/core/a.ts', fn(150))).toEqual([]);
  expect(tooLong('src/core/a.ts', fn(151))).toEqual(['src/core/a.ts:1 (151 lines)']);
  expect(tooLong('src/http/a.ts', fn(81))).toEqual(['src/http/a.ts:1 (81 lines)']);
  expect(tooLong('src/cli/a.ts', `const g = () => {\n${fn(80)}};\n`)).toEqual(['src/cli/a.ts:1 (82 lines)']);
});
