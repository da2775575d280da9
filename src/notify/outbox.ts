import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WebhookSpec } from '../manifest/notify-config.js';

/** One notification owed to one webhook: its rendered body (no secret is stored: the URL is read and the body signed when sent). */
export interface Delivery {
  id: string;
  event: string;
  /**
   * Where the webhook's URL and secret are (references, never their values), and its format. A
   * delivery written before webhooks were named by reference carries its `url`.
   */
  hook: Pick<WebhookSpec, 'urlEnv' | 'urlFile' | 'format' | 'secretEnv' | 'secretFile'> & { url?: string };
  body: string;
  /** Epoch ms. */
  createdAt: number;
  attempts: number;
  /** Epoch ms before which it is not tried again. */
  nextAt: number;
  lastError: string | null;
}

/**
 * The deliveries not yet taken by their webhook, one JSON file each under `<dir>` (a world's
 * `genesis/notify/outbox`): written before the first try, removed once the webhook answered 2xx, so
 * a receiver that is down, or a genesis that died, loses nothing; the next notifier on the world
 * sends them. Files are written whole (a temporary file, then a rename).
 */
export class Outbox {
  constructor(readonly dir: string) {}

  async put(delivery: Delivery): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const path = this.pathOf(delivery.id);
    await writeFile(`${path}.tmp`, JSON.stringify(delivery));
    await rename(`${path}.tmp`, path);
  }

  async remove(id: string): Promise<void> {
    await rm(this.pathOf(id), { force: true });
  }

  /** Every delivery owed, oldest first; a file that cannot be read (cut by a crash mid-write never happens, but a hand edit can) is skipped. */
  async list(): Promise<Delivery[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const out: Delivery[] = [];
    for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
      const text = await readFile(join(this.dir, name), 'utf8').catch(() => null);
      try {
        if (text !== null) out.push(JSON.parse(text) as Delivery);
      } catch {
        // Not a delivery: left where it is for a person to look at.
      }
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  private pathOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}
