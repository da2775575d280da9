import { closeSync, constants, openSync } from 'node:fs';
import { Socket } from 'node:net';
import type { OutputTail } from '../gate/output-tail.js';

/** The longest status a launcher writes after its marker (an exit code, or `unmounted`). */
const MAX_STATUS = 16;

/**
 * The output of a pooled container's command, read by the host straight from the slot's output
 * FIFO (the command's stdout and stderr both point at it, so it keeps their order), not relayed
 * by the Docker daemon. After the command's shell ends, the container's first process writes
 * `<marker><status>\n` into the same FIFO: `marker` is a random value only that process was
 * given, so the command cannot print a status of its own. The marker and its status never
 * reach the tail.
 *
 * The FIFO is opened for reading and kept open for writing by the host too, so it does not end
 * before the container opens it; `finish` lets go of that writer once every process of the
 * container is gone, and resolves when everything they wrote has been read.
 */
export class WarmOutput {
  readonly status: Promise<string>;
  private readonly socket: Socket;
  private keeper: number | null;
  private carry: Buffer = Buffer.alloc(0);
  private found: ((status: string) => void) | null = null;
  private readonly ended: Promise<void>;

  constructor(
    fifo: string,
    private readonly marker: Buffer,
    private readonly tail: OutputTail,
  ) {
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      this.keeper = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      closeSync(reader);
      throw error;
    }
    this.status = new Promise((resolve) => {
      this.found = resolve;
    });
    this.socket = new Socket({ fd: reader, readable: true, writable: false });
    this.ended = new Promise((resolve) => {
      this.socket.on('close', () => resolve());
      this.socket.on('end', () => resolve());
      this.socket.on('error', () => resolve());
    });
    this.socket.on('data', (chunk: Buffer) => this.take(chunk));
  }

  /**
   * Every writer in the container is gone: lets go of the host's own, reads what is left (at most
   * `graceMs`), and hands any held-back bytes to the tail.
   */
  async finish(graceMs = 2_000): Promise<void> {
    this.closeKeeper();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.ended, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.close();
  }

  /** Stops reading at once (the run failed or went another way). */
  close(): void {
    this.closeKeeper();
    this.socket.destroy();
    if (this.carry.length > 0) this.tail.push(this.carry);
    this.carry = Buffer.alloc(0);
  }

  private closeKeeper(): void {
    if (this.keeper === null) return;
    closeSync(this.keeper);
    this.keeper = null;
  }

  private take(chunk: Buffer): void {
    let buffer = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    for (;;) {
      const at = buffer.indexOf(this.marker);
      if (at < 0) break;
      const eol = buffer.indexOf(0x0a, at + this.marker.length);
      if (eol < 0 && buffer.length - at - this.marker.length <= MAX_STATUS) {
        // The status line's end has not arrived yet: keep it back.
        this.tail.push(buffer.subarray(0, at));
        this.carry = Buffer.from(buffer.subarray(at));
        return;
      }
      const end = eol < 0 ? at + this.marker.length : eol;
      this.tail.push(buffer.subarray(0, at));
      this.found?.(buffer.subarray(at + this.marker.length, end).toString('utf8'));
      this.found = null;
      buffer = buffer.subarray(eol < 0 ? end : end + 1);
    }
    // Bytes that may be the start of a marker wait for the next chunk.
    const keep = Math.min(buffer.length, this.marker.length - 1);
    this.tail.push(buffer.subarray(0, buffer.length - keep));
    this.carry = Buffer.from(buffer.subarray(buffer.length - keep));
  }
}
