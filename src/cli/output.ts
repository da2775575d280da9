/** Prints a value as JSON on stdout, the one format scripts read. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Renders rows as an aligned text table with a header line. */
export function formatTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((row) => row.map((cell) => String(cell)));
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)),
  );
  const line = (row: string[]) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}
