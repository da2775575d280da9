import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lstatInside } from '../sandbox/gate/contained-path.js';
import { readRegularFile } from '../sandbox/gate/regular-file.js';

/**
 * The handoff file's notes with the oldest dropped until it takes at most three quarters of
 * `maxBytes`, so the next episode's append fits too; a first line that is a heading stays. Pure.
 * `dropped` counts the lines dropped (0: the text is returned as it was).
 */
export function trimNotes(text: string, maxBytes: number): { text: string; dropped: number } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, dropped: 0 };
  const budget = Math.floor((maxBytes * 3) / 4);
  const lines = text.split('\n');
  const head = lines[0]?.startsWith('#') ? [lines[0]] : [];
  const notes = lines.slice(head.length);
  const kept: string[] = [];
  let bytes = head.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  // Newest first, turned round once: an unshift per line moved every kept line again (the square of a padded file's lines).
  for (let i = notes.length - 1; i >= 0; i--) {
    const size = Buffer.byteLength(notes[i]!) + 1;
    if (bytes + size > budget) break;
    kept.push(notes[i]!);
    bytes += size;
  }
  return { text: [...head, ...kept.reverse()].join('\n'), dropped: notes.length - kept.length };
}

/**
 * Keeps a workspace's handoff file within the per-file limit by dropping its oldest notes, so an
 * episode that pads it (or a long history of honest appends) never leaves the next episodes a
 * file that only grows: the pre-gate lets a file the head holds grow by the limit each change.
 * Only a regular file reached without a link is touched. Returns a line for the episode's log, or
 * null when nothing was dropped.
 */
export async function trimHandoff(workspace: string, path: string, maxBytes: number): Promise<string | null> {
  const info = await lstatInside(workspace, path);
  if (!info?.isFile() || info.size <= maxBytes) return null;
  // Opened only as a regular file, without waiting: a FIFO made in its place after the look above would hold the read for good.
  const notes = await readRegularFile(join(workspace, path));
  if (notes === null) return null;
  const { text, dropped } = trimNotes(notes, maxBytes);
  await writeFile(join(workspace, path), text);
  return `handoff: ${path} was ${info.size} bytes, over the ${maxBytes}-byte file limit; Genesis dropped its ${dropped} oldest line(s)`;
}
