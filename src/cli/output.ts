import { formatCostUsd, type Spend } from '../ledger/change-costs.js';
import { showControls } from '../ledger/terminal-text.js';

/** Prints a value as JSON on stdout, the one format scripts read. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Prints text for a person on stdout. What an agent or the code under test wrote reaches every
 * table and sentence (a task title, a failure message, a log), so each control character is shown
 * as a glyph instead of being obeyed by the terminal.
 */
export function printText(text: string): void {
  process.stdout.write(showControls(text));
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

/** How wide the table may be: the terminal's columns, else $COLUMNS, else 120 (a log file or a pipe). */
export function terminalWidth(): number {
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns >= 40 ? columns : 120;
}

export interface TableFit {
  /** The widest a line may be. */
  width: number;
  /** Columns that may be cut (with "…") to fit, by index: the widest first, none below its header or 10 characters. */
  shrink: number[];
}

/** Cuts a cell to `width` characters, marking the cut. */
function cut(cell: string, width: number): string {
  return cell.length <= width ? cell : `${cell.slice(0, Math.max(0, width - 1))}…`;
}

/**
 * Renders rows as an aligned text table with a header line; with `fit`, the columns it names are
 * cut so that no line is wider than `fit.width` (`--json` keeps every character).
 */
export function formatTable(headers: string[], rows: Array<Array<string | number>>, fit?: TableFit): string {
  let cells = rows.map((row) => row.map((cell) => String(cell)));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)));
  if (fit) {
    const floor = (i: number) => Math.max(headers[i]!.length, 10);
    const total = () => widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1);
    // The widest is cut down to the next widest, then both together, so the cut is shared.
    while (total() > fit.width) {
      const [widest, next] = fit.shrink.filter((i) => widths[i]! > floor(i)).sort((a, b) => widths[b]! - widths[a]!);
      if (widest === undefined) break;
      const target = Math.max(floor(widest), next === undefined ? 0 : widths[next]!, widths[widest]! - (total() - fit.width));
      widths[widest] = target < widths[widest]! ? target : widths[widest]! - 1;
    }
    cells = cells.map((row) => row.map((cell, i) => (fit.shrink.includes(i) ? cut(cell, widths[i]!) : cell)));
  }
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
