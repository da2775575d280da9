import { dirname, join } from 'node:path';
import { describe, expect } from 'vitest';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

interface Check {
  name: string;
  status: string;
  detail: string;
  hint: string | null;
}

describe('a preset whose model endpoint Genesis cannot know, without agent.baseUrl', () => {
  itWith('bwrap')('is refused by genesis init, genesis doctor --world and genesis run, each saying to set agent.baseUrl', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ agent: { kind: 'command', preset: 'aider', model: 'gpt-4.1' } }),
      recording: {},
    });
    const why = 'agent.preset aider has no endpoint Genesis knows for the model gpt-4.1';

    const init = await genesis(['init', '--world', join(dirname(f.world.path), 'again.world'), '--from', join(dirname(f.world.path), 'source')]);
    expect(init.status).toBe(1);
    expect(init.stderr).toContain(why);
    expect(init.stderr).toContain('set agent.baseUrl');

    const doctor = await genesis(['doctor', '--world', f.world.path, '--json']);
    const model = (JSON.parse(doctor.stdout) as Check[]).find((c) => c.name === 'model');
    expect(model).toMatchObject({ status: 'fail', detail: expect.stringContaining(why), hint: expect.stringContaining('set agent.baseUrl') });
    expect(doctor.status).not.toBe(0);

    const run = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(why);
    expect(run.stdout).not.toContain('▶');
  });
});
