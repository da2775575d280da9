import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { genesis } from '../../helpers/genesis-cli.js';
import { bwrapAnswers } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { BASE_FILES, baseManifest } from '../../helpers/world-fixture.js';

describe.skipIf(!bwrapAnswers())('genesis init', () => {
  it('says what it waits on once the first gate has run five seconds, as genesis run does', async () => {
    const root = await tempDir('genesis-init-waits-');
    const manifest = baseManifest({ verify: { sandbox: 'bwrap', test: 'sleep 7 && node --test test/base.test.js', timeoutSec: 60 } });
    const files = { ...BASE_FILES, 'world.yaml': stringify(manifest), '.genesis/recording.yaml': stringify({ tasks: {} }) };
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(root, 'source', path)), { recursive: true });
      await writeFile(join(root, 'source', path), content);
    }
    const init = await genesis(['init', '--world', join(root, 'w.world'), '--from', join(root, 'source'), '--sandbox', 'bwrap']);
    expect(init.status, init.stderr).toBe(0);
    expect(init.stderr).toMatch(/… genesis init waits for the gate of the first commit \(verify's steps in the bwrap sandbox\) \([5-9]s so far\)/);
  }, 60_000);
});
