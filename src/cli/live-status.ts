import type { RunEvent } from '../schedule/run/events.js';
import { formatRunEvent } from './run-reporter.js';
import { formatWait, WaitBoard } from './wait-board.js';

/**
 * On a terminal, `genesis run` keeps one status line at the bottom (tasks done, outcomes, what is
 * running, for how long) and prints events above it; elsewhere it prints one plain line per event.
 */
export function createRunPrinter(out: NodeJS.WriteStream): { print(event: RunEvent): void; finish(): void } {
  const waits = new WaitBoard();
  // Every wait longer than a few seconds gets a line of its own, then one every half minute.
  const waitTimer = setInterval(() => {
    for (const wait of waits.due(Date.now())) printer.print({ type: 'wait-line', line: formatWait(wait) });
  }, 1000);
  waitTimer.unref();
  const printer = createLinePrinter(out, waits);
  return {
    print(event) {
      if (event.type === 'wait') waits.note(event.id, event.task, event.what, Date.now());
      else printer.print(event);
    },
    finish() {
      clearInterval(waitTimer);
      printer.finish();
    },
  };
}

type PrinterEvent = RunEvent | { type: 'wait-line'; line: string };

function createLinePrinter(out: NodeJS.WriteStream, waits: WaitBoard): { print(event: PrinterEvent): void; finish(): void } {
  const lineOf = (event: PrinterEvent) => (event.type === 'wait-line' ? event.line : formatRunEvent(event));
  if (!out.isTTY) {
    return {
      print: (event) => {
        const line = lineOf(event);
        if (line) out.write(`${line}\n`);
      },
      finish: () => undefined,
    };
  }
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
        base = `▸ ${event.done}/${event.tasks} tasks done · ✓ ${event.accepted} ✗ ${event.rejected + event.failed} · running: ${event.running.join(', ') || '-'}`;
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
