import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { it } from 'vitest';

/** Where scripts/setup-browser.sh finds Debian's chromium, in the same order. */
const CANDIDATES = [process.env.GENESIS_CHROMIUM, '/usr/lib/chromium/chromium', '/usr/bin/chromium'];

export function findChromium(): string | null {
  return CANDIDATES.find((path): path is string => Boolean(path) && existsSync(path!)) ?? null;
}

/**
 * `it` for browser tests. Like the other services (test/helpers/services.ts), a missing browser
 * fails the test unless GENESIS_ALLOW_SKIP names `browser` (or `all`) outside CI.
 * TODO(lead): fold 'browser' into itWith in test/helpers/services.ts.
 */
export function itWithBrowser(): typeof it {
  const allowed = (process.env.GENESIS_ALLOW_SKIP ?? '').split(',').map((s) => s.trim());
  const mayskip = !process.env.CI && (allowed.includes('browser') || allowed.includes('all'));
  return findChromium() === null && mayskip ? (it.skip as typeof it) : it;
}

/** Launches Debian's chromium headless through playwright-core (no browser download). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) {
    throw new Error('chromium is not installed: run `bash scripts/setup-browser.sh` (or set GENESIS_ALLOW_SKIP=browser to skip on purpose)');
  }
  return chromium.launch({
    executablePath,
    headless: true,
    // The test runs as root in a container, where chromium's own sandbox cannot start.
    chromiumSandbox: false,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/**
 * How many pixels of a screenshot (PNG) are the colour `css` ("rgb(r, g, b)"), give or take 3 per
 * channel: decoded by the browser's own image decoder, so a test checks what the picture shows,
 * not only what the DOM says. The page's script is a string (the tests typecheck without the DOM).
 */
export async function countPixels(page: Page, png: Buffer, css: string): Promise<number> {
  const [r, g, b] = (css.match(/\d+/g) ?? []).map(Number);
  const script = `(async () => {
    const bytes = Uint8Array.from(atob(${JSON.stringify(png.toString('base64'))}), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const context = canvas.getContext('2d');
    context.drawImage(bitmap, 0, 0);
    const px = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4)
      if (Math.abs(px[i] - ${r}) <= 3 && Math.abs(px[i + 1] - ${g}) <= 3 && Math.abs(px[i + 2] - ${b}) <= 3) n++;
    return n;
  })()`;
  return page.evaluate(script);
}
