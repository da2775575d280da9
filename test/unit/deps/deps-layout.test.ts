import { describe, expect, it } from 'vitest';
import { planDepsLayout } from '../../../src/deps/layout.js';

describe('planDepsLayout', () => {
  it('makes each output directory writable and views each entry read-only', () => {
    const layout = planDepsLayout('/cache/k/out', [
      {
        path: 'node_modules',
        type: 'dir',
        entries: [
          { name: 'vitest', type: 'dir' },
          { name: '.bin', type: 'dir' },
          { name: '.package-lock.json', type: 'file' },
        ],
      },
    ]);
    expect(layout.dirs).toEqual(['node_modules']);
    expect(layout.mounts).toEqual([
      { source: '/cache/k/out/node_modules/.bin', target: 'node_modules/.bin' },
      { source: '/cache/k/out/node_modules/.package-lock.json', target: 'node_modules/.package-lock.json' },
      { source: '/cache/k/out/node_modules/vitest', target: 'node_modules/vitest' },
    ]);
    expect(layout.links).toEqual([]);
  });

  it("recreates top-level links as they are, so pnpm's relative links stay inside the output", () => {
    const layout = planDepsLayout('/c', [
      {
        path: 'node_modules',
        type: 'dir',
        entries: [
          { name: 'semver', type: 'link', linkTarget: '.pnpm/semver@7.6.3/node_modules/semver' },
          { name: '.pnpm', type: 'dir' },
        ],
      },
    ]);
    expect(layout.links).toEqual([{ target: 'node_modules/semver', linkTarget: '.pnpm/semver@7.6.3/node_modules/semver' }]);
    expect(layout.mounts).toEqual([{ source: '/c/node_modules/.pnpm', target: 'node_modules/.pnpm' }]);
  });

  it('views an output that is a file whole, and nested outputs at their path', () => {
    const layout = planDepsLayout('/c', [
      { path: 'vendor/lock.bin', type: 'file', entries: [] },
      { path: 'py/site', type: 'dir', entries: [{ name: 'pytest', type: 'dir' }] },
    ]);
    expect(layout).toEqual({
      dirs: ['py/site'],
      mounts: [
        { source: '/c/vendor/lock.bin', target: 'vendor/lock.bin' },
        { source: '/c/py/site/pytest', target: 'py/site/pytest' },
      ],
      links: [],
    });
  });
});
