import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkAgentClis, readCoveredVersions } from '../../../src/cli/commands/doctor/agent-clis.js';
import { installAgentCli } from '../../helpers/agent-clis.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('genesis doctor on the agent CLIs installed here', () => {
  it('names each version and whether the conformance suite covers it, warning for one it does not', { timeout: 300_000 }, async () => {
    const real = await installAgentCli('codex');
    const fake = await tempDir('genesis-doctor-clis-');
    // An opencode of another version than the pinned one.
    await writeFile(join(fake, 'opencode'), '#!/bin/sh\necho 0.0.7\n');
    await chmod(join(fake, 'opencode'), 0o755);

    const check = await checkAgentClis(`${real.binDir}:${fake}:/usr/bin:/bin`);

    expect(check.detail).toContain(`codex ${real.version} (${real.bin}): covered by the conformance suite`);
    expect(check.detail).toContain(
      `opencode 0.0.7 (${join(fake, 'opencode')}): not covered (the suite covers ${(await readCoveredVersions())['opencode-ai']})`,
    );
    expect(check.detail).toContain('claude: not installed');
    expect(check).toMatchObject({ status: 'warn', hint: expect.stringContaining('npm install -g opencode-ai@') });
    expect(await checkAgentClis(`${real.binDir}:/usr/bin:/bin`)).toMatchObject({ status: 'ok', hint: null });
  });
});
