/** Keeps the last `limit` bytes of a stream, and counts all of it. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.total += buf.length;
    this.chunks.push(buf);
    this.kept += buf.length;
    while (this.kept - (this.chunks[0]?.length ?? 0) >= this.limit && this.chunks.length > 1) {
      this.kept -= this.chunks.shift()!.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    const tail = all.length > this.limit ? all.subarray(all.length - this.limit) : all;
    const cut = this.total - tail.length;
    return (cut > 0 ? `[${cut} earlier bytes not kept]\n` : '') + tail.toString('utf8');
  }
}
