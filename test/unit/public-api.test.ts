import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../../src';
import * as workerApi from '../../src/worker/index';
import * as clientApi from '../../src/client/index';
import * as workflowApi from '../../src/workflows/index';
import * as httpApi from '../../src/http/index';
import * as mcpApi from '../../src/mcp-server/index';
import * as codecApi from '../../src/codec/index';
import * as testingApi from '../../src/testing/index';
import * as a2aApi from '../../src/a2a/index';
import * as uiApi from '../../src/ui';

/** The public API is documented: TSDoc on every export in the source, every export of every entry point on docs/api.md. */
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

/** Each entry point and its heading on docs/api.md. */
const ENTRY_POINTS: Array<[string, Record<string, unknown>]> = [
  ['durable-agents', api],
  ['durable-agents/worker', workerApi],
  ['durable-agents/client', clientApi],
  ['durable-agents/workflow', workflowApi],
  ['durable-agents/http', httpApi],
  ['durable-agents/mcp', mcpApi],
  ['durable-agents/codec', codecApi],
  ['durable-agents/testing', testingApi],
  ['durable-agents/a2a', a2aApi],
  ['durable-agents/ui', uiApi],
];

it.each(ENTRY_POINTS)('lists every runtime export of %s in its section of docs/api.md', (entry, module) => {
  const page = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  const start = page.indexOf(`## \`${entry}\``);
  expect(start).toBeGreaterThan(-1);
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end === -1 ? undefined : end);
  const missing = Object.keys(module).filter((name) => name !== '__esModule' && !section.includes(`\`${name}\``));
  expect(missing).toEqual([]);
});

it('has an entry point in package.json for each section of docs/api.md', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const subpaths = Object.keys(manifest.exports).filter((k) => k !== './package.json');
  expect(subpaths.map((k) => k.replace(/^\./, 'durable-agents'))).toEqual(ENTRY_POINTS.map(([entry]) => entry));
});

it.each([
  ['durable-agents', 'what both sides need'],
  ['durable-agents/workflow', 'what workflow authors need, by name'],
])('keeps %s small (%s): at most 60 names, as the API report counts them', (entry) => {
  const report = readFileSync(join(ROOT, 'etc', 'api-report.md'), 'utf8');
  const start = report.indexOf(`## ${entry}\n`);
  const section = report.slice(start, report.indexOf('\n## ', start + 1));
  // One line per declaration; an overloaded function has a line per signature, one name.
  const names = new Set(
    section
      .split('\n')
      .flatMap((line) => /^(?:function|const|class|interface|type|abstract class) (\w+)/.exec(line)?.[1] ?? []),
  );
  const counted = Number(/^(\d+) names: /m.exec(section)?.[1]);
  expect(counted).toBe(names.size);
  expect(report).toContain(`| \`${entry}\` | ${counted} |`);
  expect(names.size).toBeGreaterThan(20);
  expect(names.size).toBeLessThanOrEqual(60);
});
