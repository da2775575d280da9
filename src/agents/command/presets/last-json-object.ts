import type { JsonObject } from './json-lines.js';

/** JSON's own white space: what may follow the last object. */
const JSON_SPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * The last top-level JSON object of a stream fed in chunks, as a CLI prints its result at the end
 * (pretty-printed, so only its first line starts with "{"): an object starts with "{" at the start
 * of a line, and counts only when nothing but white space follows it. Each character is looked at
 * once and each object parsed once, when its closing brace comes: parsing the rest of the output
 * from every line that starts with "{", at every chunk, took the square of the output.
 *
 * A raw line break inside a string, or a "{" at the start of a line inside an object, cannot be
 * a pretty-printed object's: the object so far is dropped, and a new one may start there.
 */
export class LastJsonObject {
  private pieces: string[] = [];
  private size = 0;
  /** Inside an object: its depth of braces and brackets; 0 outside one. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private lineStart = true;
  private last: JsonObject | null = null;

  /** @param maxChars an object longer than this is dropped (and the last one with it). */
  constructor(private readonly maxChars = 8 * 1024 * 1024) {}

  /** The last object, or null when none, or when something other than white space followed it. */
  get value(): JsonObject | null {
    return this.last;
  }

  push(chunk: string): void {
    let from = this.depth > 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i] as string;
      const startsLine = this.lineStart;
      this.lineStart = c === '\n';
      if (c === '{' && startsLine && !this.inString) {
        // A new object; one left open before it was not a pretty-printed object's.
        this.pieces = [];
        this.size = 0;
        this.depth = 0;
        this.last = null;
        from = i;
      }
      if (this.depth === 0 && from === -1) {
        if (!JSON_SPACE.has(c)) this.last = null;
        continue;
      }
      if (this.inString) {
        if (c === '\n') this.drop();
        else if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
        if (this.depth === 0) from = -1;
        continue;
      }
      if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if (c === '}' || c === ']') {
        this.depth--;
        if (this.depth === 0) {
          this.finish(chunk.slice(from, i + 1));
          from = -1;
        }
      }
    }
    if (this.depth > 0 && from !== -1) this.keep(chunk.slice(from));
  }

  private keep(piece: string): void {
    this.size += piece.length;
    if (this.size > this.maxChars) this.drop();
    else this.pieces.push(piece);
  }

  /** The object so far cannot be one: forget it, and read on as outside any object. */
  private drop(): void {
    this.pieces = [];
    this.size = 0;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.last = null;
  }

  private finish(piece: string): void {
    this.keep(piece);
    const text = this.pieces.join('');
    this.pieces = [];
    this.size = 0;
    this.last = null;
    if (text === '') return;
    try {
      const value: unknown = JSON.parse(text);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) this.last = value as JsonObject;
    } catch {
      // Braces that balance around something that is not JSON (a line of progress text).
    }
  }
}
