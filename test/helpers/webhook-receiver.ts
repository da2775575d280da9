import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A webhook receiver on 127.0.0.1 at a port of its own that can be taken down and brought back on
 * the same port (a receiver that is down for a while). It answers `status` (200 unless told) and
 * keeps what it was sent.
 */
export class WebhookReceiver {
  readonly received: ReceivedHook[] = [];
  status = 200;
  private server: Server | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** A receiver on a free port, up (or, with `down`, the port reserved and left closed). */
  static async start(options: { down?: boolean } = {}): Promise<WebhookReceiver> {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const receiver = new WebhookReceiver(port);
    if (!options.down) await receiver.up();
    return receiver;
  }

  async up(): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        res.statusCode = this.status;
        res.end();
      });
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Resolves once `count` requests have arrived, or rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 20_000): Promise<ReceivedHook[]> {
    const until = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > until) throw new Error(`waited ${timeoutMs} ms for ${count} webhook(s), got ${this.received.length}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.received;
  }
}
