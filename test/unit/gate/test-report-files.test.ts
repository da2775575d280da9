import { readFileSync } from 'node:fs';
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportOf } from '../../../src/gate/reports/cases.js';
import { findReportFiles, MAX_STEP_REPORT_BYTES, ReportBudget, readJUnitFiles, removeReportFiles } from '../../../src/gate/reports/files.js';
import { readStepReport } from '../../../src/gate/reports/read-report.js';
import { tempDir } from '../../helpers/temp-dir.js';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/test-reports/${name}`, import.meta.url), 'utf8');

async function workDir(files: Record<string, string>): Promise<string> {
  const dir = await tempDir('genesis-report-');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

describe('readJUnitFiles', () => {
  it('merges every file a glob matches, and only those', async () => {
    const dir = await workDir({
      'reports/a.xml': fixture('pytest-junitxml.xml'),
      'reports/b.xml': fixture('gotestsum-junit.xml'),
      'reports/notes.txt': 'x',
      'other/c.xml': fixture('jest-junit.xml'),
    });
    const read = await readJUnitFiles(dir, ['reports/*.xml']);
    expect('run' in read && read.files).toEqual(['reports/a.xml', 'reports/b.xml']);
    expect('run' in read && reportOf(read.run)).toMatchObject({ passed: 6, failed: 6, skipped: 2 });
  });

  it('says report-missing when nothing matches', async () => {
    const read = await readJUnitFiles(await workDir({ 'junit.xml': fixture('jest-junit.xml') }), ['reports/*.xml']);
    expect(read).toEqual({ problem: { reason: 'report-missing', message: 'verify.report.junit names reports/*.xml, and the step wrote no such file' } });
  });

  it('says report-invalid, naming the file, for a broken document or one that is not JUnit', async () => {
    const broken = await readJUnitFiles(await workDir({ 'reports/junit.xml': '<testsuites><testcase name="a">' }), ['reports/junit.xml']);
    expect(broken).toEqual({ problem: { reason: 'report-invalid', message: expect.stringMatching(/^reports\/junit.xml is not well-formed XML: .*line 1/) } });
    const html = await readJUnitFiles(await workDir({ 'reports/junit.xml': '<html></html>' }), ['reports/*.xml']);
    expect(html).toEqual({
      problem: { reason: 'report-invalid', message: 'reports/junit.xml is not JUnit XML: its root element is <html>, not <testsuites> or <testsuite>' },
    });
  });

  it('refuses a report that is a symlink, which could make the gate read a file of the host', async () => {
    const dir = await workDir({});
    await mkdir(join(dir, 'reports'));
    await symlink('/etc/passwd', join(dir, 'reports/junit.xml'));
    expect(await readJUnitFiles(dir, ['reports/*.xml'])).toEqual({
      problem: { reason: 'report-invalid', message: 'reports/junit.xml is a symbolic link; a report must be a file the test runner wrote' },
    });
  });

  it('does not look through a symlinked directory', async () => {
    const outside = await workDir({ 'x.xml': fixture('jest-junit.xml') });
    const dir = await workDir({});
    await symlink(outside, join(dir, 'reports'));
    expect(await findReportFiles(dir, ['reports/*.xml'])).toEqual([]);
  });
});

describe('removeReportFiles', () => {
  it('removes reports a tree already holds, so only what the step writes is read', async () => {
    const dir = await workDir({ 'reports/forged.xml': fixture('jest-junit.xml'), 'reports/keep.txt': 'x' });
    expect(await removeReportFiles(dir, ['reports/*.xml'])).toEqual(['reports/forged.xml']);
    expect(await findReportFiles(dir, ['reports/*'])).toEqual(['reports/keep.txt']);
  });
});

describe('readStepReport', () => {
  const base = { output: '', truncated: false, junit: ['reports/*.xml'] };

  it('prefers the named report to the output', async () => {
    const dir = await workDir({ 'reports/junit.xml': fixture('pytest-junitxml.xml') });
    const read = await readStepReport({ ...base, workDir: dir, required: true, output: 'TAP version 13\nok 1 - printed\n1..1\n' });
    expect('run' in read && read.run?.format).toBe('junit');
  });

  it("fails report-mismatch when the named report disagrees with the runner's printed summary", async () => {
    const dir = await workDir({ 'reports/junit.xml': fixture('pytest-junitxml.xml') });
    const read = await readStepReport({ ...base, workDir: dir, required: true, output: '=========== 7 failed in 0.20s ===========\n' });
    expect('problem' in read && read.problem.reason).toBe('report-mismatch');
  });

  it('is a problem when the test step wrote no report, and falls back to the output for a check', async () => {
    const dir = await workDir({});
    expect(await readStepReport({ ...base, workDir: dir, required: true, output: fixture('node-tap.txt') })).toMatchObject({
      problem: { reason: 'report-missing' },
    });
    const check = await readStepReport({ ...base, workDir: dir, required: false, output: fixture('node-tap.txt') });
    expect('run' in check && check.run?.format).toBe('node-test');
  });

  it('reads JUnit XML that closes the output when no report is named', async () => {
    const read = await readStepReport({ ...base, junit: null, workDir: await workDir({}), required: true, output: fixture('node-junit-reporter.xml') });
    expect('run' in read && read.source).toBe('JUnit XML in the output');
  });
});

describe('readJUnitFiles through a linked directory', () => {
  it('refuses a named report whose directory is a link out of the work dir', async () => {
    const outside = await workDir({ 'junit.xml': fixture('jest-junit.xml') });
    const dir = await workDir({});
    await symlink(outside, join(dir, 'reports'));
    expect(await readJUnitFiles(dir, ['reports/junit.xml'])).toMatchObject({
      problem: { reason: 'report-invalid', message: 'reports/junit.xml is outside the work dir (through a symbolic link)' },
    });
    expect(await readJUnitFiles(dir, ['reports/*.xml'])).toMatchObject({ problem: { reason: 'report-missing' } });
  });
});

describe('readJUnitFiles over the limit of one step', () => {
  it('fails report-too-large when the files matched are too large together, each under the per-file limit, without reading them', async () => {
    const dir = await workDir({});
    await mkdir(join(dir, 'reports'));
    // Twenty sparse files of 31 MiB: each under the per-file limit, 620 MiB together.
    for (let i = 0; i < 20; i++) {
      await writeFile(join(dir, 'reports', `r${i}.xml`), '');
      await truncate(join(dir, 'reports', `r${i}.xml`), 31 * 1024 * 1024);
    }
    const before = process.memoryUsage().rss;
    const read = await readJUnitFiles(dir, ['reports/*.xml']);
    expect(read).toMatchObject({
      problem: { reason: 'report-too-large', message: expect.stringContaining(`over the ${MAX_STEP_REPORT_BYTES}-byte limit of one step`) },
    });
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    expect(await readStepReport({ workDir: dir, junit: ['reports/*.xml'], output: '', truncated: false, required: false })).toMatchObject({
      problem: { reason: 'report-too-large' },
    });
  });
});

describe('readJUnitFiles over the limits of one gate', () => {
  it('fails report-too-large when the steps of one gate read more report bytes together than the gate may', async () => {
    const report = fixture('jest-junit.xml');
    const budget = new ReportBudget(Buffer.byteLength(report) * 2 + 10);
    const dir = await workDir({ 'reports/junit.xml': report });
    // Three steps (a test and two task checks, say) each under the step's limit: the third is one too many.
    expect(await readJUnitFiles(dir, ['reports/*.xml'], budget)).toHaveProperty('run');
    expect(await readJUnitFiles(dir, ['reports/*.xml'], budget)).toHaveProperty('run');
    expect(await readJUnitFiles(dir, ['reports/*.xml'], budget)).toMatchObject({
      problem: { reason: 'report-too-large', message: expect.stringContaining(`limit of one gate's reports together`) },
    });
  });

  it('fails report-too-large past the test cases one gate may hold, however few bytes they take', async () => {
    const cases = Array.from({ length: 50 }, (_, i) => `<testcase name="t${i}"/>`).join('');
    const dir = await workDir({ 'reports/junit.xml': `<testsuite>${cases}</testsuite>` });
    expect(await readJUnitFiles(dir, ['reports/*.xml'], new ReportBudget(undefined, 49))).toMatchObject({ problem: { reason: 'report-too-large' } });
    const budget = new ReportBudget(undefined, 80);
    expect(await readJUnitFiles(dir, ['reports/*.xml'], budget)).toHaveProperty('run');
    expect(await readJUnitFiles(dir, ['reports/*.xml'], budget)).toMatchObject({ problem: { reason: 'report-too-large' } });
  });
});
