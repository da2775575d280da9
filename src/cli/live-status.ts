import type { RunEvent } from '../schedule/run/events.js';
import { formatRunEvent } from './run-reporter.js';

/**
 * On a terminal, `genesis run` keeps one status line at the bottom (tasks done, outcomes, what is
 * running, for how long) and prints events above it; elsewhere it prints one plain line per event.
 */
export function createRunPrinter(out: NodeJS.WriteStream): { print(event: RunEvent): void; finish(): void } {
  if (!out.isTTY) {
    return {
      print: (event) => {
        const line = formatRunEvent(event);
        if (line) out.write(`${line}\n`);
      },
      finish: () => undefined,
    };
  }
  const started = Date.now();
  let status = '';
  const clear = () => out.write('\r\x1b[K');
  const draw = () => out.write(status.slice(0, Math.max(20, (out.columns ?? 100) - 1)));
  const timer = setInterval(() => {
    if (!status) return;
    clear();
    status = status.replace(/ · \d+s$/, '') + ` · ${Math.round((Date.now() - started) / 1000)}s`;
    draw();
  }, 1000);
  timer.unref();
  return {
    print(event) {
      if (event.type === 'progress') {
        status = `▸ ${event.done}/${event.tasks} tasks done · ✓ ${event.accepted} ✗ ${event.rejected + event.failed} · running: ${event.running.join(', ') || '-'} · ${Math.round((Date.now() - started) / 1000)}s`;
        clear();
        draw();
        return;
      }
      const line = formatRunEvent(event);
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
