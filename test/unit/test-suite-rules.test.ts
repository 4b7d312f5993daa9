import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Rules of this test suite that a test can break without failing itself: timing belongs to the
 * bench (an upper bound on wall-clock time fails on a busy machine, not on a slow program), and
 * tests in a browser skip on a machine without one instead of failing.
 */
const ROOT = join(__dirname, '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const files = testFiles(ROOT).filter((f) => !f.endsWith('test-suite-rules.test.ts'));

it('asserts no upper bound on wall-clock time (timing is measured in npm run bench)', () => {
  const bounds = files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .map((line, i) => ({ line, at: `${relative(ROOT, file)}:${i + 1}` }))
      .filter(({ line }) => /(Date|performance)\.now\(\) - [\w.]+\)\.toBeLessThan/.test(line))
      .map(({ at }) => at),
  );
  expect(bounds).toEqual([]);
});

it('runs browser tests through describeInBrowser, so a machine without Chromium skips them', () => {
  const browserFiles = files.filter((f) => /from 'playwright-core'/.test(readFileSync(f, 'utf8')));
  expect(browserFiles.length).toBeGreaterThan(0);
  for (const file of browserFiles)
    expect({ file: relative(ROOT, file), guarded: /describeInBrowser\(/.test(readFileSync(file, 'utf8')) }).toEqual({
      file: relative(ROOT, file),
      guarded: true,
    });
});
