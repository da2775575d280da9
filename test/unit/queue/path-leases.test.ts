import { describe, expect, it } from 'vitest';
import { PathLeases } from '../../../src/queue/memory/path-leases.js';

describe('PathLeases', () => {
  it('leases disjoint paths to two holders', () => {
    const leases = new PathLeases();
    expect(leases.tryAcquire('e1', ['src/add.js'])).toBe(true);
    expect(leases.tryAcquire('e2', ['src/sub.js', 'lib/**'])).toBe(true);
    expect(leases.holders()).toEqual(['e1', 'e2']);
  });

  it('never leases overlapping paths twice', () => {
    const leases = new PathLeases();
    expect(leases.tryAcquire('e1', ['src'])).toBe(true);
    expect(leases.tryAcquire('e2', ['src/add.js'])).toBe(false);
    expect(leases.tryAcquire('e3', ['src/**/*.js'])).toBe(false);
    expect(leases.tryAcquire('e4', ['**/*.md'])).toBe(false);
    expect(leases.holders()).toEqual(['e1']);
  });

  it('grants all paths or none', () => {
    const leases = new PathLeases();
    leases.tryAcquire('e1', ['src/add.js']);
    expect(leases.tryAcquire('e2', ['bin/calc.js', 'src/add.js'])).toBe(false);
    // bin/calc.js was not taken by the failed attempt.
    expect(leases.tryAcquire('e3', ['bin/calc.js'])).toBe(true);
  });

  it('frees the paths of a released holder', () => {
    const leases = new PathLeases();
    leases.tryAcquire('e1', ['src']);
    leases.release('e1');
    expect(leases.holders()).toEqual([]);
    expect(leases.tryAcquire('e2', ['src/add.js'])).toBe(true);
  });

  it('ignores the release of a holder it does not know', () => {
    const leases = new PathLeases();
    leases.tryAcquire('e1', ['src']);
    leases.release('nobody');
    expect(leases.holders()).toEqual(['e1']);
  });

  it('lets a holder renew its own lease without conflicting with itself', () => {
    const leases = new PathLeases();
    expect(leases.tryAcquire('e1', ['src'])).toBe(true);
    expect(leases.tryAcquire('e1', ['src/add.js'])).toBe(true);
    expect(leases.holders()).toEqual(['e1']);
    expect(leases.tryAcquire('e2', ['src/sub.js'])).toBe(true);
  });
});
