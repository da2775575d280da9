import { describe, expect, it } from 'vitest';
import { CONTROL_LINE_MARK, hasControls, markControlLines, showControls, stripTerminalEscapes } from '../../../src/ledger/terminal-text.js';

const ESC = '\u001b';

describe('text from an agent on a terminal', () => {
  it('strips colour codes for the readers of test output, and more than the old ESC [ … letter pattern did', () => {
    expect(stripTerminalEscapes(`${ESC}[32m✔ adds${ESC}[39m (1ms)`)).toBe('✔ adds (1ms)');
    // An operating-system command (a window title, a hyperlink) is a sequence too.
    expect(stripTerminalEscapes(`${ESC}]8;;http://x${ESC}\\link${ESC}]8;;${ESC}\\ ok`)).toBe('link ok');
  });

  it('shows every control character as a glyph and leaves tab and newline alone', () => {
    expect(showControls(`a${ESC}[1A${ESC}[2K\rb\tc\nd\u0007\u007f`)).toBe('a␛[1A␛[2K␍b\tc\nd␇␡');
    expect(showControls('x\u009b2Ky')).toBe('x<U+009B>2Ky');
    // Trojan Source: a right-to-left override reorders what a reviewer reads.
    expect(showControls('if (ok \u202e} {\u2066')).toBe('if (ok <U+202E>} {<U+2066>');
    expect(showControls('plain ✓ text, ünïcode')).toBe('plain ✓ text, ünïcode');
  });

  it('marks exactly the lines that held control characters', () => {
    const diff = ['+const a = 1;', `+// tidy${ESC}[1A${ESC}[2K`, '+const b = 2;'].join('\n');
    expect(markControlLines(diff).split('\n')).toEqual(['+const a = 1;', `+// tidy␛[1A␛[2K${CONTROL_LINE_MARK}`, '+const b = 2;']);
    expect(hasControls(markControlLines(diff))).toBe(false);
    expect(hasControls('clean')).toBe(false);
    expect(hasControls('carriage\r')).toBe(true);
  });

  it('renders a megabyte of escapes in linear time', () => {
    const started = performance.now();
    const shown = showControls(`${ESC}[`.repeat(500_000));
    expect(shown.length).toBe(1_000_000);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
