import type { RunEvent } from '../schedule/run/ports/events.js';
import { formatRunEvent } from './run-reporter.js';
import { showControls } from '../ledger/terminal-text.js';
import { formatWait, WaitBoard } from './wait-board.js';

/**
 * On a terminal, `genesis run` keeps one status line at the bottom (tasks done, outcomes, what is
 * running, for how long) and prints events above it; elsewhere it prints one plain line per event.
 */
export function createRunPrinter(out: NodeJS.WriteStream): { print(event: RunEvent): void; finish(): void } {
  const waits = new WaitBoard();
  // What each running episode does now, since when: plain output has no status line to show it.
  const phases = new Map<string, { task: string; phase: string; since: number }>();
  let lastLine = Date.now();
  // Every wait longer than a few seconds gets a line of its own, then one every half minute; and
  // plain output silent for half a minute says what is still running, so a log never looks hung.
  const waitTimer = setInterval(() => {
    const now = Date.now();
    for (const wait of waits.due(now)) printer.print({ type: 'wait-line', line: formatWait(wait) });
    if (!out.isTTY && phases.size > 0 && now - lastLine >= SILENCE_MS) printer.print({ type: 'wait-line', line: formatStillRunning(phases, now) });
  }, 1000);
  waitTimer.unref();
  const lines = createLinePrinter(out, waits);
  const printer = {
    print(event: PrinterEvent) {
      // A progress line repeats or waits (see createPlainPrinter): it does not end a silence.
      if (event.type === 'wait-line' || (event.type !== 'progress' && formatRunEvent(event) !== null)) lastLine = Date.now();
      lines.print(event);
    },
  };
  const enter = (id: string, task: string, phase: string) => {
    if (phases.get(id)?.phase !== phase) phases.set(id, { task, phase, since: Date.now() });
  };
  return {
    print(event) {
      if (event.type === 'episode-phase') enter(event.id, event.task, event.phase);
      // A change past its own gate is in the integration queue until it lands (its episode ends then).
      if (event.type === 'integration') for (const e of event.entries) enter(e.id, e.task, `integration queue (${e.stage})`);
      if (event.type === 'episode-end') phases.delete(event.id);
      if (event.type === 'wait') waits.note(event.id, event.task, event.what, Date.now());
      else if (event.type !== 'episode-phase') printer.print(event);
    },
    finish() {
      clearInterval(waitTimer);
      lines.finish();
    },
  };
}

const SILENCE_MS = 30_000;

/** One line of what runs now: each episode's task, the phase it is in and for how long. */
export function formatStillRunning(phases: ReadonlyMap<string, { task: string; phase: string; since: number }>, now: number, at = new Date(now)): string {
  const running = [...phases.values()].map((p) => `${p.task} (${p.phase.replaceAll('-', ' ')}, ${Math.round((now - p.since) / 1000)}s)`);
  return `${at.toISOString().slice(11, 19)} … still running: ${running.join(', ')}`;
}

type PrinterEvent = RunEvent | { type: 'wait-line'; line: string };

function createLinePrinter(out: NodeJS.WriteStream, waits: WaitBoard): { print(event: PrinterEvent): void; finish(): void } {
  // A task's title, a rejection's message and a failure signature carry what an agent or its tests
  // printed; the terminal is shown its control characters, never told to obey them.
  const lineOf = (event: PrinterEvent) => {
    const line = event.type === 'wait-line' ? event.line : formatRunEvent(event);
    return line === null ? null : showControls(line);
  };
  if (!out.isTTY) return createPlainPrinter(out, lineOf);
  const started = Date.now();
  let status = '';
  const clear = () => out.write('\r\x1b[K');
  const draw = () => out.write(status.slice(0, Math.max(20, (out.columns ?? 100) - 1)));
  const waiting = () => {
    const longest = waits.current(Date.now())[0];
    return longest && longest.ms >= 5000 ? ` · ${longest.task} waiting ${Math.round(longest.ms / 1000)}s` : '';
  };
  let base = '';
  const timer = setInterval(() => {
    if (!base) return;
    clear();
    status = `${base}${waiting()} · ${Math.round((Date.now() - started) / 1000)}s`;
    draw();
  }, 1000);
  timer.unref();
  return {
    print(event) {
      if (event.type === 'progress') {
        base = showControls(
          `▸ ${event.done}/${event.tasks} tasks done · ✓ ${event.accepted} ✗ ${event.rejected + event.failed} · running: ${event.running.join(', ') || '-'}`,
        );
        status = `${base}${waiting()} · ${Math.round((Date.now() - started) / 1000)}s`;
        clear();
        draw();
        return;
      }
      const line = lineOf(event);
      if (!line) return;
      clear();
      out.write(`${line}\n`);
      if (status) draw();
    },
    finish() {
      clearInterval(timer);
      if (status) clear();
    },
  };
}

/** How long plain output holds a progress line for the events that led to it. */
const PROGRESS_SETTLE_MS = 1000;

/**
 * Plain output (a pipe, a file): one line per event, and the progress line only when it says
 * something new, once the events that changed it are printed. The run reports progress when its
 * policy has decided, which can be before the ledger's event of the same change arrives (a
 * landing is counted before its episode's end is printed); so a progress line is held until the
 * run has been quiet for a moment, each newer one taking its place, and dropped when it repeats
 * the last one printed.
 */
function createPlainPrinter(out: NodeJS.WriteStream, lineOf: (event: PrinterEvent) => string | null): { print(event: PrinterEvent): void; finish(): void } {
  let printed = '';
  let held: { text: string; line: string } | null = null;
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (held && held.text !== printed) {
      out.write(`${held.line}\n`);
      printed = held.text;
    }
    held = null;
  };
  const settle = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(flush, PROGRESS_SETTLE_MS);
    timer.unref();
  };
  return {
    print(event) {
      const line = lineOf(event);
      if (!line) return;
      if (event.type === 'progress') {
        // The time in front differs from line to line; what it says is the rest.
        held = { text: line.replace(/^\S+\s+/, ''), line };
        settle();
        return;
      }
      out.write(`${line}\n`);
      if (held) settle();
    },
    finish: flush,
  };
}
