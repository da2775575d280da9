import { describe, expect, it } from 'vitest';
import { formatTable } from '../../../src/cli/output.js';

describe('formatTable', () => {
  it('aligns every column under its header, two spaces apart', () => {
    const table = formatTable(
      ['id', 'task', 'outcome'],
      [
        ['20260101-000000-001-abcdef', 'add', 'accepted'],
        ['e2', 'tokenize', 'rejected'],
      ],
    );
    expect(table).toBe(
      [
        'id                          task      outcome',
        '20260101-000000-001-abcdef  add       accepted',
        'e2                          tokenize  rejected',
      ].join('\n'),
    );
    const lines = table.split('\n');
    for (const header of ['task', 'outcome']) {
      const column = lines[0]!.indexOf(header);
      for (const line of lines.slice(1)) expect(line[column - 1]).toBe(' ');
    }
  });

  it('widens a column to its longest header', () => {
    expect(formatTable(['attempt', 'x'], [[1, 'y']])).toBe('attempt  x\n1        y');
  });

  it('prints numbers as they are', () => {
    expect(formatTable(['n', 'rate'], [[10, 0.25]])).toBe('n   rate\n10  0.25');
  });

  it('does not pad the last column, so lines have no trailing spaces', () => {
    const table = formatTable(['a', 'long header'], [['x', 'y']]);
    for (const line of table.split('\n')) expect(line).toBe(line.trimEnd());
  });

  it('trims the trailing spaces left by an empty last cell', () => {
    expect(formatTable(['a', 'b'], [['x', '']])).toBe('a  b\nx');
  });

  it('prints only the header for no rows', () => {
    expect(formatTable(['id', 'task'], [])).toBe('id  task');
  });

  it('keeps a short row aligned with the columns it has', () => {
    expect(formatTable(['id', 'task', 'x'], [['1'], ['22', 't', 'z']])).toBe('id  task  x\n1\n22  t     z');
  });
});

describe('formatTable fitted to a width', () => {
  const rows = [
    ['a', 'x'.repeat(60), 'y'.repeat(90)],
    ['b', 'short', 'z'],
  ];

  it('cuts the columns it may cut, widest first, so no line is wider than asked, marking each cut', () => {
    const table = formatTable(['id', 'made by', 'verified'], rows, { width: 80, shrink: [1, 2] });
    const lines = table.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/^a {3}x{36}… {2}y{36}…$/);
    expect(lines[2]).toMatch(/^b {3}short +z$/);
  });

  it('leaves a table that fits as it is, and never cuts a column below its header or 10 characters', () => {
    expect(formatTable(['id', 'made by'], [['a', 'b']], { width: 80, shrink: [1] })).toBe('id  made by\na   b');
    const narrow = formatTable(['id', 'made by', 'verified'], rows, { width: 10, shrink: [1, 2] }).split('\n');
    expect(narrow[1]).toBe(`a   ${'x'.repeat(9)}…  ${'y'.repeat(9)}…`);
  });
});
