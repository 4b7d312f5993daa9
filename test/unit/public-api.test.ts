import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../../src';
import * as workflowApi from '../../src/workflow';

/** The public API is documented: TSDoc on every export in the source, every export on the README's API page. */
const ROOT = join(__dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

it('has TSDoc on every exported declaration', () => {
  const undocumented: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = /^export (?:async )?(?:function|class|const|interface|type|abstract class) (\w+)/.exec(line);
      if (!m) return;
      let j = i - 1;
      while (j >= 0 && !lines[j].trim()) j--;
      // An overloaded function's implementation follows its (documented) overloads.
      const declaredBefore = new RegExp(`^export (?:async )?function ${m[1]}\\b`);
      const overloaded =
        (lines[j] ?? '').trim().endsWith(';') && lines.slice(0, i).some((earlier) => declaredBefore.test(earlier));
      if (!overloaded && !(lines[j] ?? '').trim().endsWith('*/'))
        undocumented.push(`${file.slice(ROOT.length + 1)}: ${m[1]}`);
    });
  }
  expect(undocumented).toEqual([]);
});

it("lists every runtime export of both entry points on the README's API page", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const page = readme.slice(readme.indexOf('## Public API'), readme.indexOf('## Architecture'));
  const missing = [...Object.keys(api), ...Object.keys(workflowApi)].filter((name) => !page.includes(`\`${name}\``));
  expect(missing).toEqual([]);
});
