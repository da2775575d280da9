import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JUnitFormatError, parseJUnit } from '../../../src/gate/reports/junit.js';
import { JUnitStreamParser, TooManyCasesError } from '../../../src/gate/reports/junit-stream.js';

const dir = new URL('../../fixtures/test-reports/', import.meta.url);
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.xml'));

/** The document fed to the streaming reader in pieces of `size` characters. */
function streamed(xml: string, size: number, maxCases?: number) {
  const parser = new JUnitStreamParser(maxCases);
  for (let i = 0; i < xml.length; i += size) parser.write(xml.slice(i, i + size));
  return parser.end();
}

describe('JUnit read as a stream', () => {
  it.each(fixtures)('reads %s as parseJUnit reads it whole, however the text is cut', (name) => {
    const xml = readFileSync(new URL(name, dir), 'utf8');
    for (const size of [1, 3, 64, 1 << 20]) expect(streamed(xml, size)).toEqual(parseJUnit(xml));
  });

  it('refuses what is not a well-formed JUnit document, naming the line', () => {
    const refused = [
      '<testsuites><testcase name="a"></testsuites>',
      '<testsuites><testcase name="a">',
      '',
      'junk<testsuite/>',
      '<testsuite a=1/>',
      '<testsuite/><testsuite/>',
      '<testsuite>&foo;</testsuite>',
      '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]><testsuite>&a;</testsuite>',
    ];
    for (const xml of refused) expect(() => streamed(xml, 5), xml).toThrow(JUnitFormatError);
    expect(() => streamed('<testsuite>\n\n<testcase></testsuite>', 4)).toThrow(/line 3/);
    expect(() => streamed('<html><body/></html>', 4)).toThrow('not JUnit XML: its root element is <html>, not <testsuites> or <testsuite>');
  });

  it('keeps of a failure the first line of its message only, and stops past the cases it may keep', () => {
    const trace = `Error: boom\n${'    at frame (file.js:1:1)\n'.repeat(100_000)}`;
    const run = streamed(`<testsuite name="s"><testcase name="t"><failure><![CDATA[${trace}]]></failure></testcase></testsuite>`, 65_536);
    expect(run.cases).toEqual([{ name: 's > t', outcome: 'failed', message: 'Error: boom', fileLevel: false }]);
    const many = `<testsuites>${'<testcase name="x"/>'.repeat(11)}</testsuites>`;
    expect(streamed(many, 7, 11).cases).toHaveLength(11);
    expect(() => streamed(many, 7, 10)).toThrow(TooManyCasesError);
  });
});
