/**
 * JUnit XML read as a stream with saxes, a maintained, strict (well-formedness checking) SAX
 * parser: of the document only what makes a test case is kept (its names, outcome, the first line
 * of its message), so what a report costs is its cases (and, while it is read, the one text node
 * saxes is reading: a report file is at most 32 MiB, see files.ts). parseJUnit (junit.ts) reads a
 * document held whole through the same reader. Pure but for the file it reads.
 *
 * saxes checks what a well-formed document needs for its cases to mean anything (elements that
 * nest and close in order, one root, attributes quoted, entities known) and declares no entity of
 * a DOCTYPE; a DOCTYPE with an internal subset (where entity bombs live) is refused outright. It
 * reads each character once, whatever shape the text has.
 */
import { SaxesParser } from 'saxes';
import { openRegularFile } from '../../sandbox/gate/regular-file.js';
import { isFileLevelName, type TestCase, type TestRun } from './cases.js';

/** Text of a failure kept for its message: its first line is all a case keeps. */
const MAX_MESSAGE_TEXT = 16 * 1024;

type Attributes = Record<string, string>;

/** A suite of the chain: its own cases, then those of its suites (parseJUnit's order), flattened once at the end. */
interface SuiteNode {
  own: TestCase[];
  nested: SuiteNode[];
}

interface Frame {
  /** A testsuites/testsuite on the way from the root: its testcase and testsuite children count. */
  node?: SuiteNode;
  /** For a testsuite of the chain, the names of the suites its cases are under, joined with ' > ' (and cut at MAX_PATH). */
  path: string;
  /** For a counted testcase: what its children say. */
  testcase?: { attrs: Attributes; failure: string | null; error: string | null; skipped: { type: string } | null };
  /** For a failure or error child of a counted testcase: its message attribute and text so far. */
  problem?: { kind: 'failure' | 'error'; message: string; text: string };
}

/** Elements nested deeper than this are refused: no runner nests suites so, and each level costs every case below it. */
const MAX_DEPTH = 256;
/** The suite names a case is named under are cut at this length: what a name costs stays within a constant of its tag. */
const MAX_PATH = 1024;

/** A document that is not well-formed XML, or whose root is not a JUnit element. */
export class JUnitFormatError extends Error {}

/** A document with more cases than its reader may keep. */
export class TooManyCasesError extends Error {}

/**
 * Reads the JUnit document in the file at `path`, only if it is a regular file (opened without
 * following a link or waiting on a FIFO); throws JUnitFormatError as parseJUnit does, and
 * TooManyCasesError past `maxCases` (what the cases cost in memory is the bound, not the bytes).
 */
export async function readJUnitFile(path: string, maxCases = Number.POSITIVE_INFINITY): Promise<TestRun> {
  const handle = await openRegularFile(path);
  if (!handle) throw new JUnitFormatError('not a regular file: a report must be a file the test runner wrote');
  try {
    const parser = new JUnitStreamParser(maxCases);
    for await (const chunk of handle.createReadStream({ encoding: 'utf8', highWaterMark: 256 * 1024, autoClose: false })) parser.write(chunk as string);
    return parser.end();
  } finally {
    await handle.close();
  }
}

/** The streaming reader itself: `write` text as it comes, `end` for the run. */
export class JUnitStreamParser {
  private readonly sax = new SaxesParser({ position: true });
  private readonly stack: Frame[] = [];
  private rootName: string | null = null;
  private root: SuiteNode | null = null;
  /** The claimed counts: the root's attributes, and those of the root's testsuite children. */
  private rootAttrs: Attributes = {};
  private readonly childSuiteAttrs: Attributes[] = [];
  private counted = 0;

  constructor(private readonly maxCases = Number.POSITIVE_INFINITY) {
    this.sax.on('doctype', (doctype) => {
      if (doctype.includes('[')) this.fail('a DOCTYPE with declarations of its own');
    });
    this.sax.on('opentag', (tag) => this.open(tag.name, tag.attributes as Attributes));
    this.sax.on('closetag', () => this.close());
    this.sax.on('text', (text) => this.addText(text));
    this.sax.on('cdata', (text) => this.addText(text));
  }

  write(text: string): void {
    this.guard(() => this.sax.write(text));
  }

  end(): TestRun {
    this.guard(() => this.sax.close());
    if (this.rootName === null) this.fail('the document has no root element');
    const cases = flatten(this.root);
    return { format: 'junit', cases, summary: cases.length === 0 ? this.claimedCounts() : null };
  }

  /** saxes's own errors ("3:22: unexpected close tag.") as this reader's, naming the line. */
  private guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      if (error instanceof JUnitFormatError || error instanceof TooManyCasesError) throw error;
      const message = (error as Error).message.replace(/^\d+:\d+: /, '');
      throw new JUnitFormatError(`not well-formed XML: ${message} (line ${this.sax.line})`);
    }
  }

  private fail(message: string): never {
    throw new JUnitFormatError(`not well-formed XML: ${message} (line ${this.sax.line})`);
  }

  private addText(text: string): void {
    const problem = this.stack.at(-1)?.problem;
    if (problem && problem.text.length < MAX_MESSAGE_TEXT) problem.text += text.slice(0, MAX_MESSAGE_TEXT - problem.text.length);
  }

  private open(name: string, attrs: Attributes): void {
    const parent = this.stack.at(-1);
    if (!parent) {
      this.rootName = name;
      if (name !== 'testsuites' && name !== 'testsuite')
        throw new JUnitFormatError(`not JUnit XML: its root element is <${name}>, not <testsuites> or <testsuite>`);
      this.rootAttrs = attrs;
      this.root = { own: [], nested: [] };
      this.stack.push({ node: this.root, path: name === 'testsuite' ? (attrs.name ?? '').trim().slice(0, MAX_PATH) : '' });
      return;
    }
    if (this.stack.length >= MAX_DEPTH) this.fail(`elements nested deeper than ${MAX_DEPTH} levels`);
    const frame: Frame = { path: '' };
    if (parent.node && name === 'testsuite') {
      const own = (attrs.name ?? '').trim();
      frame.path = (parent.path && own ? `${parent.path} > ${own}` : parent.path || own).slice(0, MAX_PATH);
      frame.node = { own: [], nested: [] };
      parent.node.nested.push(frame.node);
      if (this.stack.length === 1) this.childSuiteAttrs.push(attrs);
    } else if (parent.node && name === 'testcase') {
      frame.path = parent.path;
      frame.testcase = { attrs, failure: null, error: null, skipped: null };
    } else if (parent.testcase && (name === 'failure' || name === 'error')) {
      frame.problem = { kind: name, message: attrs.message ?? '', text: '' };
    } else if (parent.testcase && name === 'skipped') {
      parent.testcase.skipped ??= { type: attrs.type ?? '' };
    }
    this.stack.push(frame);
  }

  /** saxes has checked that the tag closes the element opened last. */
  private close(): void {
    const frame = this.stack.pop();
    if (!frame) return;
    const parent = this.stack.at(-1);
    if (frame.problem && parent?.testcase) {
      const message = (frame.problem.message || frame.problem.text.trim().split(/\r?\n/)[0] || '').trim();
      // The first failure, else the first error: as parseJUnit reads them.
      if (frame.problem.kind === 'failure') parent.testcase.failure ??= message;
      else parent.testcase.error ??= message;
    }
    if (frame.testcase && parent?.node) {
      if (++this.counted > this.maxCases) throw new TooManyCasesError(`more than ${this.maxCases} test cases`);
      parent.node.own.push(toCase(frame.testcase, frame.path));
    }
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

/** The cases of a suite tree in parseJUnit's order: a suite's own cases, then its suites', each in turn. */
function flatten(root: SuiteNode | null): TestCase[] {
  const cases: TestCase[] = [];
  const pending: SuiteNode[] = root ? [root] : [];
  while (pending.length > 0) {
    const node = pending.pop() as SuiteNode;
    for (const c of node.own) cases.push(c);
    for (let i = node.nested.length - 1; i >= 0; i--) pending.push(node.nested[i] as SuiteNode);
  }
  return cases;
}

function toCase(testcase: NonNullable<Frame['testcase']>, path: string): TestCase {
  const classname = (testcase.attrs.classname ?? '').trim();
  const name = (testcase.attrs.name ?? '').trim();
  const full = uninformative(classname)
    ? path && name
      ? `${path} > ${name}`
      : path || name
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
