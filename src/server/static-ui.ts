import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { GenesisError } from '../errors/genesis-error.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/** No inline script or style, no third party: the dashboard shows text an agent wrote. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The dashboard's files: plain HTML, CSS and ES modules in `ui/` next to this module (no build
 * step). `npm run build` must copy the folder to `dist/server/ui/`.
 */
export function findUiDir(): string {
  const dir = fileURLToPath(new URL('./ui/', import.meta.url));
  if (!existsSync(join(dir, 'index.html'))) {
    throw new GenesisError('serve-ui-missing', `the dashboard's files are not at ${dir}`, {
      hint: 'reinstall Genesis, or copy src/server/ui to dist/server/ui after building',
    });
  }
  return dir;
}

/**
 * Serves the dashboard: `/` is index.html and `/ui/<file>` the rest. Only files present when the
 * server started are served, so no request path can reach outside the folder.
 */
export function createUiRoutes(uiDir: string = findUiDir()): Hono {
  const files = new Map<string, string>();
  for (const entry of readdirSync(uiDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !(extname(entry.name) in TYPES)) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(`/ui/${relative(uiDir, path).split(sep).join('/')}`, path);
  }
  const send = async (path: string) =>
    new Response(await readFile(path), {
      headers: {
        'content-type': TYPES[extname(path)]!,
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        // Files are small and change with upgrades; revalidating every time keeps them fresh.
        'cache-control': 'no-cache',
      },
    });
  const ui = new Hono();
  ui.get('/', () => send(join(uiDir, 'index.html')));
  ui.get('/ui/*', async (c) => {
    const path = files.get(c.req.path);
    return path ? send(path) : new Response('not found', { status: 404 });
  });
  return ui;
}
