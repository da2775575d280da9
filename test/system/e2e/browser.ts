import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
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
