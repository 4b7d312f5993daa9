import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowBundleCache } from '../../src/worker/bundle-cache';

const dir = mkdtempSync(join(tmpdir(), 'bundle-cache-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sources(name: string): string[] {
  const src = join(dir, name);
  const files = ['a.js', 'b.js'].map((f) => join(`${src}-${f}`));
  for (const f of files) writeFileSync(f, `// ${f}\n`);
  return files;
}

it('keys a bundle by what the bundler is given, hook text included', () => {
  const cache = new WorkflowBundleCache(join(dir, 'keys'));
  const base = { workflowsPath: '/app/workflows.js' };
  expect(cache.key(base)).toBe(cache.key({ ...base }));
  expect(cache.key(base)).not.toBe(cache.key({ workflowsPath: '/app/other.js' }));
  expect(cache.key(base)).not.toBe(cache.key({ ...base, workflowInterceptorModules: ['/app/i.js'] }));
  expect(cache.key(base)).not.toBe(cache.key({ ...base, webpackConfigHook: (c) => c }));
  expect(cache.key(base)).not.toBe(cache.key(base, { encrypts: true }));
});

it('gives back a saved bundle only while every file it was made from is unchanged', () => {
  const cache = new WorkflowBundleCache(join(dir, 'files'));
  const files = sources('files');
  const key = cache.key({ workflowsPath: files[0] });
  expect(cache.lookup(key)).toBeUndefined();
  // A file webpack read that is not on disk (the generated entry point) is left to the key.
  expect(cache.save(key, 'bundle code', [...files, join(dir, 'in-memory-entrypoint.cjs')])).toBe(true);
  expect(cache.lookup(key)).toBe('bundle code');
  writeFileSync(files[1], '// edited\n');
  expect(cache.lookup(key)).toBeUndefined();
  writeFileSync(files[1], `// ${files[1]}\n`);
  expect(cache.lookup(key)).toBe('bundle code');
  rmSync(files[0]);
  expect(cache.lookup(key)).toBeUndefined();
});

it('never gives back a bundle whose file was changed or cut short', () => {
  const cache = new WorkflowBundleCache(join(dir, 'torn'));
  const key = cache.key({ workflowsPath: 'x' });
  cache.save(key, 'the whole bundle', sources('torn'));
  writeFileSync(join(dir, 'torn', `${key}.js`), 'the whole');
  expect(cache.lookup(key)).toBeUndefined();
});

it('keeps the newest eight bundles, and a cache it cannot write only means bundling again', () => {
  const cache = new WorkflowBundleCache(join(dir, 'prune'));
  for (let i = 0; i < 10; i++) cache.save(cache.key({ workflowsPath: `w${i}` }), `code ${i}`, []);
  expect(readdirSync(join(dir, 'prune')).filter((f) => f.endsWith('.json'))).toHaveLength(8);
  expect(cache.lookup(cache.key({ workflowsPath: 'w9' }))).toBe('code 9');
  writeFileSync(join(dir, 'a-file'), '');
  const unwritable = new WorkflowBundleCache(join(dir, 'a-file', 'cache'));
  expect(unwritable.save('k', 'code', [])).toBe(false);
  expect(unwritable.lookup('k')).toBeUndefined();
});
