/**
 * JUnit XML read as a stream: the file in chunks, and of the document only what makes a test
 * case (its names, outcome, the first line of its message), so what a report costs is its cases,
 * never its bytes (a stack trace of megabytes keeps its first kilobytes). The same reading as
 * parseJUnit (junit.ts), which reads a document held whole (one printed on standard output).
 * Pure but for the file it reads.
 *
 * It checks what a well-formed document needs for its cases to mean anything: elements that
 * nest and close in order, one root, attributes quoted, entities known. A DOCTYPE with an
 * internal subset (where entity bombs live) is refused; comments, processing instructions and
 * CDATA are read as XML has them, CDATA and comments a chunk at a time. Numeric character
 * references are kept as written, as parseJUnit's reader keeps them.
 */
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { isFileLevelName, type TestCase, type TestRun } from './cases.js';
import { JUnitFormatError } from './junit.js';

/** A tag (or a processing instruction) longer than this is refused: no runner writes one. */
const MAX_CONSTRUCT = 1024 * 1024;
/** Text of a failure kept for its message: its first line is all a case keeps. */
const MAX_MESSAGE_TEXT = 16 * 1024;

type Attributes = Record<string, string>;

interface Frame {
  name: string;
  /** A testsuites/testsuite on the way from the root: its testcase and testsuite children count. */
  chain: boolean;
  /** For a testsuite of the chain, the suite names its cases are under. */
  suites: string[];
  /** For a frame of the chain: its own cases, then those of its suites, in parseJUnit's order (a suite's cases before its suites'). */
  own?: TestCase[];
  nested?: TestCase[][];
  /** For a counted testcase: what its children say. */
  testcase?: { attrs: Attributes; failure: string | null; error: string | null; skipped: { type: string } | null };
  /** For a failure or error child of a counted testcase: its message attribute and text so far. */
  problem?: { kind: 'failure' | 'error'; message: string; text: string };
}

const NAME = /^[A-Za-z_:][\w.:-]*/;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** A document with more cases than its reader may keep. */
export class TooManyCasesError extends Error {}

/**
 * Reads the JUnit document in the file at `path`; throws JUnitFormatError as parseJUnit does, and
 * TooManyCasesError past `maxCases` (what the cases cost in memory is the bound, not the bytes).
 */
export async function readJUnitFile(path: string, maxCases = Number.POSITIVE_INFINITY): Promise<TestRun> {
  const parser = new JUnitStreamParser(maxCases);
  const decoder = new StringDecoder('utf8');
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) parser.write(decoder.write(chunk as Buffer));
  parser.write(decoder.end());
  return parser.end();
}

/** The streaming reader itself: `write` text as it comes, `end` for the run. */
export class JUnitStreamParser {
  private buffer = '';
  private readonly stack: Frame[] = [];
  private rootName: string | null = null;
  private rootDone = false;
  private line = 1;
  private cases: TestCase[] = [];
  /** The claimed counts: the root's attributes, and those of the root's testsuite children. */
  private rootAttrs: Attributes = {};
  private readonly childSuiteAttrs: Attributes[] = [];
  private counted = 0;
  /** Inside a CDATA section or a comment, read a chunk at a time (a stack trace may be megabytes of CDATA). */
  private inside: { close: string; keep: boolean } | null = null;

  constructor(private readonly maxCases = Number.POSITIVE_INFINITY) {}

  write(text: string): void {
    this.buffer += text;
    this.consume(false);
  }

  end(): TestRun {
    this.consume(true);
    if (this.buffer.trim() !== '') this.fail('the document ends inside markup');
    if (this.rootName === null) this.fail('the document has no root element');
    if (this.stack.length > 0) this.fail(`<${this.stack.at(-1)!.name}> is never closed`);
    return { format: 'junit', cases: this.cases, summary: this.cases.length === 0 ? this.claimedCounts() : null };
  }

  private fail(message: string): never {
    throw new JUnitFormatError(`not well-formed XML: ${message} (line ${this.line})`);
  }

  /** Takes `n` characters off the buffer, counting lines for the messages. */
  private take(n: number): string {
    const taken = this.buffer.slice(0, n);
    this.buffer = this.buffer.slice(n);
    for (let i = taken.indexOf('\n'); i !== -1; i = taken.indexOf('\n', i + 1)) this.line++;
    return taken;
  }

  private consume(final: boolean): void {
    for (;;) {
      if (this.buffer.length === 0) return;
      if (this.inside) {
        const { close, keep } = this.inside;
        const at = this.buffer.indexOf(close);
        // All but what could be the start of the closing mark, which the next chunk may complete.
        const upto = at === -1 ? Math.max(0, this.buffer.length - (close.length - 1)) : at;
        const text = this.take(upto);
        if (keep) this.addText(text);
        if (at === -1) {
          if (final) this.fail('the document ends inside a CDATA section or comment');
          return;
        }
        this.take(close.length);
        this.inside = null;
        continue;
      }
      if (this.buffer.startsWith('<![CDATA[') || this.buffer.startsWith('<!--')) {
        const cdata = this.buffer.startsWith('<![CDATA[');
        if (cdata && this.stack.length === 0) this.fail('CDATA outside the root element');
        this.take(cdata ? 9 : 4);
        this.inside = { close: cdata ? ']]>' : '-->', keep: cdata };
        continue;
      }
      const lt = this.buffer.indexOf('<');
      if (lt !== 0) {
        // Text up to the next tag (all of it at the end, or all but a trailing part of an entity).
        const upto = lt === -1 ? (final ? this.buffer.length : this.safeTextEnd()) : lt;
        if (upto === 0) return;
        this.text(this.take(upto));
        continue;
      }
      const end = this.constructEnd();
      if (end === null) {
        if (this.buffer.length > MAX_CONSTRUCT) this.fail(`a tag over ${MAX_CONSTRUCT} characters`);
        if (final) this.fail('the document ends inside markup');
        return;
      }
      this.markup(this.take(end));
    }
  }

  /** Where text may be cut without splitting an entity (`&amp;` across two chunks). */
  private safeTextEnd(): number {
    const amp = this.buffer.lastIndexOf('&');
    return amp !== -1 && !this.buffer.includes(';', amp) ? amp : this.buffer.length;
  }

  /** The length of the markup construct at the buffer's start, or null while it is incomplete. */
  private constructEnd(): number | null {
    const b = this.buffer;
    const closeOf = (start: number, close: string): number | null => {
      const at = b.indexOf(close, start);
      return at === -1 ? null : at + close.length;
    };
    if (b.startsWith('<?')) return closeOf(2, '?>');
    if (b.startsWith('<!DOCTYPE')) {
      const [bracket, gt] = [b.indexOf('['), b.indexOf('>')];
      if (bracket !== -1 && (gt === -1 || bracket < gt)) this.fail('a DOCTYPE with declarations of its own');
    }
    if (b.length < 9 && ('<!--'.startsWith(b) || '<![CDATA['.startsWith(b))) return null;
    // A tag: its end is the first '>' outside quotes.
    let quote = '';
    for (let i = 1; i < b.length; i++) {
      const c = b[i]!;
      if (quote) {
        if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '>') return i + 1;
      else if (c === '<') this.fail("'<' inside a tag");
    }
    return null;
  }

  private markup(text: string): void {
    if (text.startsWith('<?')) return;
    if (text.startsWith('<!DOCTYPE')) {
      if (text.includes('[')) this.fail('a DOCTYPE with declarations of its own');
      if (this.rootName !== null) this.fail('a DOCTYPE after the root element');
      return;
    }
    if (text.startsWith('<!')) this.fail(`unknown markup ${text.slice(0, 20)}`);
    if (text.startsWith('</')) {
      this.close(text.slice(2, -1).trim());
      return;
    }
    const selfClosing = text.endsWith('/>');
    const body = text.slice(1, selfClosing ? -2 : -1);
    const name = NAME.exec(body)?.[0];
    if (!name) this.fail(`a tag without a name: ${text.slice(0, 40)}`);
    this.open(name, this.attributes(body.slice(name.length)));
    if (selfClosing) this.close(name);
  }

  private attributes(text: string): Attributes {
    const attrs: Attributes = {};
    let rest = text;
    for (;;) {
      const trimmed = rest.trimStart();
      if (trimmed === '') return attrs;
      if (trimmed.length === rest.length) this.fail('attributes must be separated by white space');
      const match = /^([A-Za-z_:][\w.:-]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/.exec(trimmed);
      if (!match) this.fail(`an attribute that is not name="value": ${trimmed.slice(0, 40)}`);
      if (Object.hasOwn(attrs, match[1]!)) this.fail(`attribute ${match[1]} given twice`);
      attrs[match[1]!] = this.decode(match[3] ?? match[4] ?? '');
      rest = trimmed.slice(match[0].length);
    }
  }

  private decode(text: string): string {
    if (!text.includes('&')) return text;
    return text.replace(/&([^;&\s]*);?/g, (whole, entity: string) => {
      if (!whole.endsWith(';')) this.fail(`'&' that starts no entity`);
      if (Object.hasOwn(ENTITIES, entity)) return ENTITIES[entity]!;
      const code = /^#x([0-9a-fA-F]+)$/.exec(entity)?.[1] ?? /^#([0-9]+)$/.exec(entity)?.[1];
      if (code === undefined) this.fail(`unknown entity &${entity};`);
      const point = Number.parseInt(code, entity.startsWith('#x') ? 16 : 10);
      if (!(point > 0 && point <= 0x10ffff)) this.fail(`character reference &${entity}; out of range`);
      // Kept as written, as parseJUnit's reader keeps it: both readers give a case the same message.
      return whole;
    });
  }

  private text(text: string): void {
    if (this.stack.length === 0) {
      if (text.trim() !== '') this.fail('text outside the root element');
      return;
    }
    this.addText(this.decode(text));
  }

  private addText(text: string): void {
    const problem = this.stack.at(-1)?.problem;
    if (problem && problem.text.length < MAX_MESSAGE_TEXT) problem.text += text.slice(0, MAX_MESSAGE_TEXT - problem.text.length);
  }

  private open(name: string, attrs: Attributes): void {
    const parent = this.stack.at(-1);
    if (!parent) {
      if (this.rootDone) this.fail(`a second root element <${name}>`);
      this.rootName = name;
      if (name !== 'testsuites' && name !== 'testsuite')
        throw new JUnitFormatError(`not JUnit XML: its root element is <${name}>, not <testsuites> or <testsuite>`);
      this.rootAttrs = attrs;
      const suites = name === 'testsuite' ? [(attrs.name ?? '').trim()].filter(Boolean) : [];
      this.stack.push({ name, chain: true, suites, own: [], nested: [] });
      return;
    }
    const frame: Frame = { name, chain: false, suites: [] };
    if (parent.chain && name === 'testsuite') {
      frame.chain = true;
      frame.suites = [...parent.suites, (attrs.name ?? '').trim()];
      frame.own = [];
      frame.nested = [];
      if (this.stack.length === 1) this.childSuiteAttrs.push(attrs);
    } else if (parent.chain && name === 'testcase') {
      frame.testcase = { attrs, failure: null, error: null, skipped: null };
    } else if (parent.testcase && (name === 'failure' || name === 'error')) {
      frame.problem = { kind: name, message: attrs.message ?? '', text: '' };
    } else if (parent.testcase && name === 'skipped') {
      parent.testcase.skipped ??= { type: attrs.type ?? '' };
    }
    this.stack.push(frame);
  }

  private close(name: string): void {
    const frame = this.stack.pop();
    if (!frame) this.fail(`</${name}> closes nothing`);
    if (frame.name !== name) this.fail(`</${name}> closes <${frame.name}>`);
    const parent = this.stack.at(-1);
    if (frame.problem && parent?.testcase) {
      const message = (frame.problem.message || frame.problem.text.trim().split(/\r?\n/)[0] || '').trim();
      // The first failure, else the first error: as parseJUnit reads them.
      if (frame.problem.kind === 'failure') parent.testcase.failure ??= message;
      else parent.testcase.error ??= message;
    }
    if (frame.testcase && parent) {
      if (++this.counted > this.maxCases) throw new TooManyCasesError(`more than ${this.maxCases} test cases`);
      parent.own!.push(toCase(frame.testcase, parent.suites));
    }
    if (frame.chain) {
      const all = [...frame.own!, ...frame.nested!.flat()];
      if (parent) parent.nested!.push(all);
      else this.cases = all;
    }
    if (this.stack.length === 0) this.rootDone = true;
  }

  private claimedCounts(): TestRun['summary'] {
    const read = (nodes: Attributes[]) => {
      const sum = (key: string) => nodes.reduce((total, n) => total + (Number(n[key] ?? '') || 0), 0);
      const failed = sum('failures') + sum('errors');
      const skipped = sum('skipped');
      return { passed: Math.max(0, sum('tests') - failed - skipped), failed, skipped };
    };
    if (this.rootName === 'testsuites' && (this.rootAttrs.tests ?? '') !== '') return read([this.rootAttrs]);
    return read(this.rootName === 'testsuite' ? [this.rootAttrs] : this.childSuiteAttrs);
  }
}

// node --test writes classname="test" for every case; its suites carry the names instead.
const uninformative = (classname: string): boolean => classname === '' || classname === 'test';

function toCase(testcase: NonNullable<Frame['testcase']>, suites: readonly string[]): TestCase {
  const classname = (testcase.attrs.classname ?? '').trim();
  const name = (testcase.attrs.name ?? '').trim();
  const full = uninformative(classname)
    ? [...suites, name].filter(Boolean).join(' > ')
    : name === ''
      ? classname
      : name.startsWith(classname)
        ? name
        : `${classname} > ${name}`;
  const problem = testcase.failure ?? testcase.error;
  // node writes a todo test that ran with its <skipped type="todo"/>, and a <failure> too when its body threw: a todo, not a failure.
  const todo = testcase.skipped?.type === 'todo';
  return {
    name: full,
    outcome: problem !== null && !todo ? 'failed' : testcase.skipped ? 'skipped' : 'passed',
    message: todo ? '' : (problem ?? ''),
    fileLevel: isFileLevelName(name),
    ...(todo ? { ranAs: problem === null ? ('passed' as const) : ('failed' as const) } : {}),
  };
}
