import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

/**
 * The TypeScript snippets of the README and the guides, as the docs test compiles and runs them.
 *
 * A comment line before a block's fence says what to do with it:
 * - none: compile it (as CommonJS and as ESM);
 * - `<!-- snippet: fragment -->`: a piece of code on purpose, not compiled;
 * - `<!-- snippet: cjs -->` or `<!-- snippet: esm -->`: compile it under that module system only;
 * - `<!-- snippet: run -->`: compile it and run it to its end (exit code 0);
 * - `<!-- snippet: background -->`: compile it and keep it running (until it prints `ready`)
 *   while the page's `run` snippets run, then stop it with Ctrl+C.
 * Words combine (`<!-- snippet: cjs run -->`). A first line `// src/name.ts` (or `// name.ts`)
 * names the file, so the snippets of one page can import each other (`./agent.js`).
 *
 * A `tsx` block is front-end code: it is compiled (never run) as a browser project built with
 * Vite compiles it (React's JSX, the DOM, bundler module resolution): mode `web`.
 */
export interface Snippet {
  /** The page, relative to the repository: `README.md`, `docs/models.md`. */
  page: string;
  /** Line of the opening fence in the page (1-based). */
  line: number;
  /** The file the snippet becomes, relative to the page's `src/`. */
  file: string;
  modes: Array<'cjs' | 'esm' | 'web'>;
  kind: 'compile' | 'run' | 'background' | 'fragment';
  code: string;
}

/** The README and every page under docs/. */
export function documentationPages(): string[] {
  return [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
}

/** The TypeScript snippets of one page. */
export function snippetsOf(page: string): Snippet[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  let marker: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^<!-- snippet: ([\w -]+) -->$/.exec(lines[i].trim());
    if (m) {
      marker = m[1].trim().split(/\s+/);
      continue;
    }
    const fence = /^```(\w*)\s*$/.exec(lines[i]);
    if (!fence) {
      if (lines[i].trim()) marker = [];
      continue;
    }
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    if (end >= lines.length) throw new Error(`${page}:${start + 1}: a code block that does not end`);
    if (['ts', 'typescript', 'tsx'].includes(fence[1])) {
      const code = lines.slice(start + 1, end).join('\n') + '\n';
      const unknown = marker.filter((w) => !['fragment', 'cjs', 'esm', 'run', 'background'].includes(w));
      if (unknown.length) throw new Error(`${page}:${start + 1}: unknown snippet marker ${unknown.join(' ')}`);
      const web = fence[1] === 'tsx';
      const named = /^\/\/ (?:src\/)?([\w.-]+\.tsx?)\b/.exec(code);
      snippets.push({
        page,
        line: start + 1,
        file: named ? named[1] : `snippet-${start + 1}.${web ? 'tsx' : 'ts'}`,
        modes: web ? ['web'] : marker.includes('cjs') ? ['cjs'] : marker.includes('esm') ? ['esm'] : ['cjs', 'esm'],
        kind: marker.includes('fragment')
          ? 'fragment'
          : marker.includes('run')
            ? 'run'
            : marker.includes('background')
              ? 'background'
              : 'compile',
        code,
      });
    }
    marker = [];
    i = end;
  }
  return snippets;
}

/** The page's directory name in the docs test project: `readme`, `getting-started`. */
export function pageDir(page: string): string {
  return page
    .replace(/^docs\//, '')
    .replace(/\.md$/, '')
    .toLowerCase();
}
