import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { computeSimWorldModel, renderSimWorld, SIM_WORLD_DEFAULTS } from '../../../src/agents/sim/world.js';
import { parseManifest, readManifest } from '../../../src/manifest/parse.js';

const TEMPLATE = new URL('../../../worlds/sim-chain/', import.meta.url);

describe('renderSimWorld', () => {
  it('renders with its defaults exactly what worlds/sim-chain holds, so the template cannot drift', async () => {
    for (const [path, content] of renderSimWorld()) {
      expect(await readFile(new URL(path, TEMPLATE), 'utf8'), path).toBe(content);
    }
  });

  it('writes a valid manifest of chained tasks worked by the sim agent', () => {
    const manifest = readManifest(renderSimWorld({ steps: 4, e: 0.25, w: 0.125, d: 0.5, f: 0.1, seed: 42, attempts: 2 }).get('world.yaml')!);
    expect(manifest.agent).toMatchObject({ kind: 'sim', sim: { e: 0.25, w: 0.125, d: 0.5, seed: 42 } });
    expect(manifest.retry).toMatchObject({ maxAttempts: 2, blockOnRepeat: false });
    expect(manifest.verify.test).toBe('sh checks/steps.sh 0.1');
    expect(manifest.tasks.map((t) => [t.id, t.paths, t.dependsOn])).toEqual([
      ['t01', ['steps/t01.txt'], []],
      ['t02', ['steps/t02.txt'], ['t01']],
      ['t03', ['steps/t03.txt'], ['t02']],
      ['t04', ['steps/t04.txt'], ['t03']],
    ]);
    expect(manifest.protected).toEqual(['world.yaml', 'checks/**']);
  });

  it('states the model of the world: recall d + (1 - d)·f, false rejection f', () => {
    expect(computeSimWorldModel({ d: 0.8, f: 0.05 })).toMatchObject({ recall: expect.closeTo(0.81, 12), falseReject: 0.05 });
    expect(computeSimWorldModel({ d: 0, f: 0 })).toMatchObject({ recall: 0, falseReject: 0 });
    expect(computeSimWorldModel()).toMatchObject({ e: SIM_WORLD_DEFAULTS.e, w: SIM_WORLD_DEFAULTS.w, attempts: 3, steps: 10 });
  });
});

describe('world.yaml with agent kind sim', () => {
  const manifest = (agent: string) => `name: x\ngoal: { outcome: o }\nverify: { test: "true" }\nagent: ${agent}\n`;

  it('fills in the defaults of agent.sim', () => {
    expect(readManifest(manifest('{ kind: sim, sim: {} }')).agent.sim).toEqual({ e: 0.1, w: 0.05, d: 0.8, seed: 1, refusals: [] });
  });

  it('requires agent.sim when the kind is sim', () => {
    expect(parseManifest(manifest('{ kind: sim }')).errors).toEqual([expect.stringMatching(/^agent\.sim: required when agent\.kind is "sim"/)]);
  });

  it('rejects rates whose sum is above 1, and a rate outside [0, 1]', () => {
    expect(parseManifest(manifest('{ kind: sim, sim: { e: 0.7, w: 0.4 } }')).errors).toEqual([expect.stringMatching(/^agent\.sim: e \+ w must be at most 1/)]);
    expect(parseManifest(manifest('{ kind: sim, sim: { d: 1.5 } }')).errors).toEqual([expect.stringMatching(/^agent\.sim\.d: /)]);
  });
});

describe('renderSimWorld with rates out of range', () => {
  it.each([
    [{ e: 0.7, w: 0.4 }, /e \+ w must be at most 1/],
    [{ d: 1.2 }, /^d \(share of wrong answers the check catches\) must be a probability in \[0, 1\], got 1\.2$/],
    [{ f: -0.1 }, /must be a probability in \[0, 1\]/],
    [{ steps: 0 }, /steps must be an integer >= 1/],
    [{ attempts: 1.5 }, /attempts must be an integer >= 1/],
    [{ seed: -1 }, /seed must be an integer in \[0, 4294967295\]/],
  ])('refuses %j with a clear invalid-model-input error', (options, message) => {
    expect(() => renderSimWorld(options)).toThrow(
      expect.objectContaining({ name: 'GenesisError', code: 'invalid-model-input', message: expect.stringMatching(message) }),
    );
  });
});
