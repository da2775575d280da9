import { StringDecoder } from 'node:string_decoder';

/** One server-sent event: its `event:` name (or empty) and its `data:` lines joined by newlines. */
export interface SseEvent {
  event: string;
  data: string;
}

/** An event's data past this is not kept (it is still forwarded): usage lives in small events. */
const MAX_EVENT_CHARS = 1024 * 1024;

/**
 * Splits a stream of server-sent events as its bytes arrive. Each byte is looked at a bounded
 * number of times (a line is scanned once for its end, once for its field), so a model, or
 * anything pretending to be one, cannot make the reader backtrack; an event larger than the bound
 * is skipped whole rather than buffered.
 */
export class SseEvents {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private skippingLine = false;
  private event = '';
  private data: string[] = [];
  private dataChars = 0;
  private oversized = false;

  constructor(private readonly onEvent: (event: SseEvent) => void) {}

  push(chunk: Buffer): void {
    this.take(this.decoder.write(chunk));
  }

  /** The end of the stream: an event not closed by a blank line is not dispatched (the stream was cut). */
  end(): void {
    this.take(this.decoder.end());
  }

  private take(text: string): void {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.skippingLine) {
        this.skippingLine = false;
        continue;
      }
      const line = this.partial + piece;
      this.partial = '';
      this.line(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    if (this.skippingLine) return;
    this.partial += text.slice(start);
    if (this.partial.length > MAX_EVENT_CHARS) {
      this.partial = '';
      this.skippingLine = true;
      this.oversized = true;
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0 && !this.oversized) this.onEvent({ event: this.event, data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      this.dataChars = 0;
      this.oversized = false;
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.dataChars += value.length;
      if (this.dataChars > MAX_EVENT_CHARS) this.oversized = true;
      else this.data.push(value);
    }
  }
}
