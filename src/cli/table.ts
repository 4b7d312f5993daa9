/**
 * Rows of cells as the command line prints tables (`list`, `schedule list`, `eval`): a header,
 * each column as wide as its widest cell, two spaces between columns, no trailing blanks.
 */
export function tableText(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
