import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/architecture.md is the map of the house: it must name every folder of `src` and of
 * `src/core`, every workflow type the worker registers, and only files that exist, so that a new
 * room or workflow cannot land without its place on the map, and a moved file cannot leave a
 * stale one.
 */
const root = join(__dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
const folders = (dir: string) =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

it('names every folder of src', () => {
  const missing = folders('src').filter((name) => !doc.includes(`src/${name}/`));
  expect(missing).toEqual([]);
});

it('names every folder of src/core in the core’s list', () => {
  const missing = folders('src/core').filter((name) => !new RegExp(`^ {2}${name}/ `, 'm').test(doc));
  expect(missing).toEqual([]);
});

it('names every workflow type the worker registers', () => {
  const bundle = readFileSync(join(root, 'src', 'workflows', 'bundle.ts'), 'utf8');
  const exported =
    /export \{([^}]+)\}/
      .exec(bundle)?.[1]
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean) ?? [];
  expect(exported.length).toBeGreaterThanOrEqual(8);
  expect(exported.filter((type) => !doc.includes(`\`${type}\``))).toEqual([]);
});

it('names only files that exist, in the index of features', () => {
  const index = doc.slice(doc.indexOf('## Features, room by room'), doc.indexOf('## Across boundaries'));
  expect(index.length).toBeGreaterThan(100);
  const named = [...index.matchAll(/`([a-z-]+\/[a-z0-9/-]*(?:\.ts|\/))`/g)].map((m) => m[1]);
  expect(named.length).toBeGreaterThan(20);
  // Names given without their folder ("memory-copies.ts" after "activities/memory.ts") are not checked.
  expect(named.filter((path) => !existsSync(join(root, 'src', path)))).toEqual([]);
});
