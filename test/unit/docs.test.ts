import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { documentationPages, snippetsOf } from '../helpers/doc-snippets';
import { ROOT } from '../helpers/processes';

/** The documentation's shape: a short front page, guides it links to, links that lead somewhere. */

const pages = [...documentationPages(), 'bench/README.md', 'CHANGELOG.md'];

it('keeps the README a front page, with the guides under docs/', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  const guides = [...readme.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]);
  expect(guides.length).toBeGreaterThanOrEqual(5);
  // Every guide is on the map, and every page on the map exists.
  const onDisk = documentationPages().filter((p) => p !== 'README.md');
  expect([...new Set(guides)].sort()).toEqual(onDisk.sort());
});

it.each(pages)('%s: every relative link leads to a file, and every #anchor to a heading', (page) => {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target)) continue;
    const [path, anchor] = target.split('#');
    const file = path ? join(ROOT, dirname(page), path) : join(ROOT, page);
    if (!existsSync(file)) broken.push(target);
    else if (anchor && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(anchor))
      broken.push(target);
  }
  expect(broken).toEqual([]);
});

it('reads every snippet marker (a misspelt one would silently skip a snippet)', () => {
  for (const page of documentationPages()) expect(() => snippetsOf(page)).not.toThrow();
  const all = documentationPages().flatMap(snippetsOf);
  expect(all.filter((s) => s.kind === 'run').length).toBeGreaterThanOrEqual(2);
});

/** GitHub's anchors: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, title] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    anchors.add(
      title
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    );
  }
  return anchors;
}
