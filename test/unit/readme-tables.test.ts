// The README's tables (the measured table above all) keep their shape: a row with more cells than its
// header loses the extra ones when rendered (GitHub's tables drop them), and one with fewer shows blanks.
// A hand edit once put a day's figures in a fifth cell of the four-column measured table.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** A row's cells as GitHub counts them: split at every pipe not escaped, inside code spans too. */
const cellsOf = (row: string): number =>
  row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/).length;

/** Each table row whose cell count differs from its table's header row, with its line number. */
function rowsOffShape(markdown: string): Array<{ line: number; cells: number; header: number }> {
  const off: Array<{ line: number; cells: number; header: number }> = [];
  let header: number | null = null;
  markdown.split('\n').forEach((text, i) => {
    if (!text.startsWith('|')) return void (header = null);
    const cells = cellsOf(text);
    if (header === null) header = cells;
    else if (cells !== header) off.push({ line: i + 1, cells, header });
  });
  return off;
}

describe('the README tables', () => {
  it('finds a row with a cell more than its header, and one with a cell fewer', () => {
    const table = ['| a | b |', '| - | - |', '| 1 | | 2 |', '| 3 |', '', '| x |', '| - |', '| `y \\| z` |'];
    expect(rowsOffShape(table.join('\n'))).toEqual([
      { line: 3, cells: 3, header: 2 },
      { line: 4, cells: 1, header: 2 },
    ]);
  });

  it('every row of every table in README.md has as many cells as its header', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme.split('\n').filter((l) => l.startsWith('|')).length).toBeGreaterThan(50);
    expect(rowsOffShape(readme)).toEqual([]);
  });
});
