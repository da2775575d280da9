import type { ChatMessage, ChatUsage } from './chat/wire.js';

/** One model call, as the transcript records it. */
export interface TurnRecord {
  turn: number;
  durationMs: number;
  /** Time spent waiting out rate limits and retries within the call. */
  waitedMs: number;
  finishReason: string | null;
  usage: ChatUsage | null;
  tools: Array<{ name: string; malformed: boolean; failed: boolean }>;
}

/** Counts over the whole episode. */
export interface TranscriptStats {
  turns: number;
  toolCalls: number;
  malformedToolCalls: number;
  failedToolCalls: number;
  waitedMs: number;
}

/**
 * The record of one `openai` episode: every message exchanged with the model (the conversation
 * could be sent again as it is), every turn's timing and usage, and how it ended. Stored in the
 * ledger as `transcript.json`; the agent log holds a readable line per step.
 */
export class Transcript {
  readonly turns: TurnRecord[] = [];
  private readonly lines: string[] = [];
  private end: { outcome: string; message: string } | null = null;

  constructor(
    private readonly meta: { model: string; baseUrl: string },
    readonly messages: ChatMessage[],
    /** Told each line as it is said: the program prints its log as it goes, so a killed one still leaves it. */
    private readonly onLine?: (line: string) => void,
  ) {}

  /** A line of the readable agent log. */
  say(line: string): void {
    this.lines.push(line);
    this.onLine?.(line);
  }

  finish(outcome: string, message: string): void {
    this.end = { outcome, message };
    this.say(`${outcome}: ${message}`);
  }

  stats(): TranscriptStats {
    const tools = this.turns.flatMap((t) => t.tools);
    return {
      turns: this.turns.length,
      toolCalls: tools.length,
      malformedToolCalls: tools.filter((t) => t.malformed).length,
      failedToolCalls: tools.filter((t) => t.failed && !t.malformed).length,
      waitedMs: this.turns.reduce((sum, t) => sum + t.waitedMs, 0),
    };
  }

  log(): string {
    return `${this.lines.join('\n')}\n`;
  }

  toJSON(): string {
    return `${JSON.stringify({ version: 1, ...this.meta, end: this.end, stats: this.stats(), turns: this.turns, messages: this.messages }, null, 2)}\n`;
  }
}

/** A tool result or message cut to one short line for the agent log. */
export function brief(text: string, max = 160): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
