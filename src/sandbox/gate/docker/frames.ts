import type { Readable } from 'node:stream';

/**
 * Feeds the payload of Docker's multiplexed attach stream (8-byte header: stream type, 3 zero
 * bytes, big-endian length) to `onPayload`, stdout and stderr alike. Unlike dockerode's
 * demuxStream it never concatenates the pending input, so a gigabyte of output is copied once.
 * Resolves when the stream ends, closes or fails.
 */
export function readFrames(stream: Readable, onPayload: (chunk: Buffer) => void): Promise<void> {
  let header: Buffer = Buffer.alloc(0);
  let remaining = 0;
  stream.on('data', (chunk: Buffer) => {
    let offset = 0;
    while (offset < chunk.length) {
      if (remaining > 0) {
        const end = Math.min(chunk.length, offset + remaining);
        onPayload(chunk.subarray(offset, end));
        remaining -= end - offset;
        offset = end;
        continue;
      }
      const part = chunk.subarray(offset, offset + 8 - header.length);
      header = header.length === 0 ? part : Buffer.concat([header, part]);
      offset += part.length;
      if (header.length === 8) {
        remaining = header.readUInt32BE(4);
        header = Buffer.alloc(0);
      }
    }
  });
  return new Promise((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
}
