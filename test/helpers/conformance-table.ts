import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

/**
 * Checks that a docs page's conformance table (between `<!-- conformance-table: written by
 * <testFile> -->` and `<!-- /conformance-table -->`) says what a test's run measured; with
 * `UPDATE_CONFORMANCE=1` it writes the table instead. Tables are compared as their cells,
 * whatever alignment a formatter gave them. `header` and each row are lists of cells.
 */
export function checkConformanceTable(page: string, testFile: string, header: string[], rows: string[][]): void {
  const start = `<!-- conformance-table: written by ${testFile} -->`;
  const end = '<!-- /conformance-table -->';
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const table = [start, '', line(header), line(header.map(() => '---')), ...rows.map(line), '', end].join('\n');
  const path = join(ROOT, page);
  const text = readFileSync(path, 'utf8');
  const [before, rest] = text.split(start);
  if (rest === undefined) throw new Error(`${page} has no "${start}" marker for its conformance table`);
  const written = `${before}${table}${rest.slice(rest.indexOf(end) + end.length)}`;
  if (process.env.UPDATE_CONFORMANCE === '1') writeFileSync(path, written);
  const cells = (t: string) =>
    t
      .split(start)[1]
      .split(end)[0]
      .replace(/[ -]+\|/g, '|')
      .replace(/\| +/g, '|');
  expect(cells(text)).toBe(cells(written));
}
