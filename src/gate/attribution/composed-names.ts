/**
 * A test name made, end to end, of string literals of several files: a tape helper builds each
 * assertion's name from the title a test file hands it and words of its own (deep-equal's
 * `'strict: ' + msg + ' are equal' + ' (reversed)'` around `'falses'`). A one-word title is too
 * common to say whose a test is when read alone; the whole name read as pieces says it. Pure.
 *
 * The pieces meet where a regular expression's \b would be (never inside a word) and each holds a
 * word character, so a name is not spelt out of single letters or punctuation. Which piece is the
 * title and which the helper's words cannot be told from the text, so a protected file that holds
 * any piece of a way to write the name keeps the test guarded (a protected helper's words as much
 * as a protected test's title), and the name is the change's only when it can be written with
 * pieces of files the change may edit, one of them a file it did edit.
 */
import { LITERAL } from './test-definitions.js';

/** Where the literals of one file come from, as own-tests.ts tells them apart. */
export type PieceSource = 'edited' | 'protected' | 'other';

/** The literals of the files of each kind, each literal once. */
export type PiecesByKind = ReadonlyMap<PieceSource, ReadonlySet<string>>;

export interface Composition {
  /** Written with pieces of edited and other unprotected files, at least one edited. */
  byEditable: boolean;
  /** A protected file holds a piece of some way to write the whole name. */
  protectedPiece: boolean;
}

/** Longer than any literal LITERAL reads. */
const MAX_PIECE = 300;
const WORD = /\w/;

/** The literals of a text that hold a word character: what a name may be written with. */
export function piecesOf(text: string): Set<string> {
  const pieces = new Set<string>();
  for (const match of text.matchAll(LITERAL)) {
    const literal = match[1] ?? match[2] ?? match[3] ?? '';
    if (WORD.test(literal)) pieces.add(literal);
  }
  return pieces;
}

/** How `name` is written with the pieces of each kind of file (see the file's comment). */
export function compositionOf(name: string, pieces: PiecesByKind): Composition {
  const edges = piecesIn(name, pieces);
  const end = name.length;
  // from[i]: name[0, i) can be written; to[j]: name[j, end) can, with pieces of any file.
  const from = new Set([0]);
  for (const e of edges) if (from.has(e.at)) from.add(e.end);
  const to = new Set([end]);
  for (const e of [...edges].reverse()) if (to.has(e.end)) to.add(e.at);
  const protectedPiece = edges.some((e) => e.kinds.has('protected') && from.has(e.at) && to.has(e.end));
  // reach[i]: 1 when name[0, i) is written with editable pieces, 2 when one of them is an edited file's.
  const reach = new Map<number, number>([[0, 1]]);
  for (const e of edges) {
    const before = reach.get(e.at);
    if (before === undefined || !(e.kinds.has('edited') || e.kinds.has('other'))) continue;
    const after = e.kinds.has('edited') ? 2 : before;
    reach.set(e.end, Math.max(reach.get(e.end) ?? 0, after));
  }
  return { byEditable: reach.get(end) === 2, protectedPiece };
}

interface Edge {
  at: number;
  end: number;
  kinds: Set<PieceSource>;
}

/** Every piece the name holds between two word boundaries, ordered by where it starts (then ends), so one pass reaches every end. */
function piecesIn(name: string, pieces: PiecesByKind): Edge[] {
  const bounds: number[] = [];
  for (let i = 0; i <= name.length; i += 1) if (i === 0 || i === name.length || !(WORD.test(name[i - 1]!) && WORD.test(name[i]!))) bounds.push(i);
  const edges: Edge[] = [];
  for (const [k, at] of bounds.entries()) {
    for (const end of bounds.slice(k + 1)) {
      if (end - at > MAX_PIECE) break;
      const piece = name.slice(at, end);
      const kinds = new Set([...pieces].filter(([, set]) => set.has(piece)).map(([kind]) => kind));
      if (kinds.size > 0) edges.push({ at, end, kinds });
    }
  }
  return edges;
}
