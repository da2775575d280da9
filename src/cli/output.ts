import { formatCostUsd, type Spend } from '../ledger/change-costs.js';

/** Prints a value as JSON on stdout, the one format scripts read. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Numbers as JSON should carry them: twelve significant digits drop float noise
 * (0.12000000000000001) and keep every digit that means something, and an infinite value (a
 * horizon when nothing fails) becomes null, as JSON has no Infinity.
 */
export function jsonNumbers(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? Number(value.toPrecision(12)) : null;
  if (Array.isArray(value)) return value.map(jsonNumbers);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, jsonNumbers(item)]));
  }
  return value;
}

/** Renders rows as an aligned text table with a header line. */
export function formatTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((row) => row.map((cell) => String(cell)));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/** Seconds with one decimal, or '' when unknown. */
export function formatSeconds(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '' : `${(ms / 1000).toFixed(1)}s`;
}

/** The headers of the columns {@link spendCells} fills. */
export const SPEND_HEADERS = ['episodes', 'tokens', 'cost', 'agent', 'gate'];

/**
 * What episodes spent, as table cells. A sum with episodes that reported nothing is a lower
 * bound and says so (`>=`); one where none reported anything is '-', never 0.
 */
export function spendCells(s: Spend): string[] {
  const atLeast = (unknown: number) => (unknown > 0 ? '>=' : '');
  return [
    String(s.episodes),
    s.tokens === null ? '-' : `${atLeast(s.episodesWithoutTokens)}${s.tokens}`,
    s.costUsd === null ? '-' : `${atLeast(s.episodesWithoutCost)}$${formatCostUsd(s.costUsd)}`,
    formatSeconds(s.agentMs),
    formatSeconds(s.gateMs),
  ];
}
