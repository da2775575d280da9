/** Bytes of combined output a sandbox keeps when the spec does not say. */
export const DEFAULT_MAX_OUTPUT_BYTES = 65_536;

/**
 * Keeps the last `capacity` bytes written to it and counts every byte, so a command that prints
 * a gigabyte costs the orchestrator `capacity` bytes of memory (plus one chunk), not a gigabyte.
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;

  constructor(readonly capacity: number = DEFAULT_MAX_OUTPUT_BYTES) {}

  /** Bytes written in all, kept or not. */
  get totalBytes(): number {
    return this.total;
  }

  get truncated(): boolean {
    return this.total > this.capacity;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.capacity <= 0 || chunk.length === 0) return;
    // A chunk bigger than the whole tail replaces it; copy so the caller's buffer can be reused.
    if (chunk.length >= this.capacity) {
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.capacity))];
      this.kept = this.capacity;
      return;
    }
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept - (this.chunks[0]?.length ?? 0) >= this.capacity) {
      this.kept -= this.chunks.shift()?.length ?? 0;
    }
  }

  /** The tail as UTF-8, starting at a character boundary when the cut fell inside one. */
  text(): string {
    let tail = Buffer.concat(this.chunks, this.kept);
    if (tail.length > this.capacity) tail = tail.subarray(tail.length - this.capacity);
    if (this.truncated) {
      let start = 0;
      // Skip UTF-8 continuation bytes (10xxxxxx) left over from a character cut in half.
      while (start < Math.min(3, tail.length) && ((tail[start] ?? 0) & 0xc0) === 0x80) start++;
      tail = tail.subarray(start);
    }
    return tail.toString('utf8');
  }
}
