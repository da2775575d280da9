import { execFile } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);

/**
 * A report whose bytes are mostly one failure's stack trace: 26 MB, under the limits of a step.
 * Read whole, as a string and a tree, it took more heap than the document's size several times
 * over; read as a stream, the cases are what it costs.
 */
async function bigReport(dir: string): Promise<void> {
  await mkdir(join(dir, 'reports'));
  const file = await open(join(dir, 'reports', 'junit.xml'), 'w');
  await file.write('<testsuite name="s">');
  await file.write('<testcase classname="pkg.Class" name="case"/>'.repeat(20_000));
  await file.write('<testcase name="boom"><failure><![CDATA[Error: boom\n');
  const frames = '    at frame (/src/file.js:1:1)\n'.repeat(10_000);
  for (let i = 0; i < 80; i++) await file.write(frames);
  await file.write(']]></failure></testcase></testsuite>');
  await file.close();
}

describe('a large JUnit report', () => {
  it('is read by a process whose heap is smaller than the report', async () => {
    const dir = await tempDir('genesis-report-memory-');
    await bigReport(dir);
    // 48 MB of old space: reading the document whole ran out of it (and out of 64 MB) and aborted.
    const { stdout } = await run(process.execPath, ['--max-old-space-size=48', '--import', 'tsx', 'test/fixtures/gate/report-child.ts', dir, 'reports/*.xml'], {
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toEqual({ passed: 20_000, failed: 1 });
  });
});
