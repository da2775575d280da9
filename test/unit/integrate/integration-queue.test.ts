import { describe, expect, it } from 'vitest';
import {
  advance,
  emptyIntegration,
  judgedAhead,
  type IntegrationCommand,
  type IntegrationEvent,
  type IntegrationState,
} from '../../../src/integrate/integration-queue.js';

const HEAD = 'h0';

function change(id: string, base = HEAD) {
  return { id, task: `t-${id}`, candidate: `cand-${id}`, base };
}

/** Feeds events one after another, keeping every command issued. */
function run(events: IntegrationEvent[], slots = 4, start: IntegrationState = emptyIntegration(HEAD, slots)) {
  let state = start;
  const commands: IntegrationCommand[] = [];
  for (const event of events) {
    const step = advance(state, event);
    state = step.state;
    commands.push(...step.commands);
  }
  return { state, commands };
}

const of = <T extends IntegrationCommand['type']>(commands: IntegrationCommand[], type: T) =>
  commands.filter((c): c is Extract<IntegrationCommand, { type: T }> => c.type === type);

describe('the integration queue', () => {
  it('builds each change on the commit of the one ahead, the first on the accepted head', () => {
    const { commands } = run([
      { type: 'join', change: change('a') },
      { type: 'join', change: change('b') },
      { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: true },
      { type: 'join', change: change('c') },
      { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: true },
    ]);
    expect(of(commands, 'build').map((c) => [c.id, c.onto])).toEqual([
      ['a', HEAD],
      ['b', 'sa'],
      ['c', 'sb'],
    ]);
  });

  it('verifies the speculative commits in parallel up to its slots, front first', () => {
    const events: IntegrationEvent[] = ['a', 'b', 'c'].flatMap((id) => [{ type: 'join', change: change(id) } as IntegrationEvent]);
    const built: IntegrationEvent[] = [
      { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: true },
      { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: true },
      { type: 'built', id: 'c', generation: 1, commit: 'sc', needsGate: true },
    ];
    const { state, commands } = run([...events, ...built], 2);
    expect(of(commands, 'verify').map((c) => [c.id, c.commit, c.onto])).toEqual([
      ['a', 'sa', HEAD],
      ['b', 'sb', 'sa'],
    ]);
    expect(state.entries.map((e) => e.stage)).toEqual(['verifying', 'verifying', 'built']);
    const next = run([{ type: 'verified', id: 'b', generation: 1 }], 2, state);
    expect(of(next.commands, 'verify').map((c) => c.id)).toEqual(['c']);
    // b passed, but a (ahead of it) has not landed: nothing lands yet.
    expect(of(next.commands, 'land')).toEqual([]);
  });

  it('lands a verified commit as it is, once those ahead have landed, with no further gate', () => {
    const { commands } = run([
      { type: 'join', change: change('a') },
      { type: 'join', change: change('b') },
      { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: true },
      { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: true },
      { type: 'verified', id: 'b', generation: 1 },
      { type: 'verified', id: 'a', generation: 1 },
      { type: 'landed', id: 'a', commit: 'sa' },
    ]);
    expect(of(commands, 'land').map((c) => [c.id, c.commit, c.expected, c.verifiedOn])).toEqual([
      ['a', 'sa', HEAD, HEAD],
      ['b', 'sb', 'sa', 'sa'],
    ]);
    expect(of(commands, 'verify')).toHaveLength(2);
  });

  it('lands a change built on its own base at once: its episode already gated exactly that tree', () => {
    const { commands } = run([
      { type: 'join', change: change('a') },
      { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
    ]);
    expect(of(commands, 'verify')).toEqual([]);
    expect(of(commands, 'land')).toMatchObject([{ id: 'a', commit: 'sa', expected: HEAD, verifiedOn: null }]);
  });

  describe('when a verification fails', () => {
    it('rejects that change alone and rebuilds those behind it on the commit it would have extended', () => {
      const { state, commands } = run([
        { type: 'join', change: change('a') },
        { type: 'join', change: change('b') },
        { type: 'join', change: change('c') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: true },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: true },
        { type: 'built', id: 'c', generation: 1, commit: 'sc', needsGate: true },
        { type: 'verified', id: 'c', generation: 1 },
        { type: 'verify-failed', id: 'b', generation: 1, reason: 'test-failed', message: '1 test failed' },
      ]);
      expect(of(commands, 'reject')).toMatchObject([{ id: 'b', reason: 'test-failed' }]);
      expect(
        of(commands, 'build')
          .filter((c) => c.generation === 2)
          .map((c) => [c.id, c.onto]),
      ).toEqual([['c', 'sa']]);
      expect(state.entries.map((e) => [e.id, e.stage])).toEqual([
        ['a', 'verifying'],
        ['c', 'building'],
      ]);
      // c's earlier pass was on a tree holding b: it counts for nothing now.
      const late = run(
        [
          { type: 'built', id: 'c', generation: 1, commit: 'old', needsGate: true },
          { type: 'verified', id: 'c', generation: 1 },
        ],
        4,
        state,
      );
      expect(late.state).toEqual(state);
    });

    it('cancels the verifications made stale by the rebuild', () => {
      const { commands } = run([
        { type: 'join', change: change('a') },
        { type: 'join', change: change('b') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: true },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: true },
        { type: 'verify-failed', id: 'a', generation: 1, reason: 'check-failed', message: 'x' },
      ]);
      expect(of(commands, 'cancel')).toEqual([{ type: 'cancel', jobs: [{ id: 'b', generation: 1 }] }]);
      expect(of(commands, 'build').at(-1)).toMatchObject({ id: 'b', generation: 2, onto: HEAD });
    });
  });

  it('does not blame a change whose tip is broken until everything ahead has landed', () => {
    const { state, commands } = run([
      { type: 'join', change: change('a') },
      { type: 'join', change: change('b') },
      { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: true },
      { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: true },
      { type: 'verify-inconclusive', id: 'b', generation: 1 },
    ]);
    expect(of(commands, 'reject')).toEqual([]);
    expect(state.entries.map((e) => e.stage)).toEqual(['verifying', 'built']);
    const after = run(
      [
        { type: 'verified', id: 'a', generation: 1 },
        { type: 'landed', id: 'a', commit: 'sa' },
      ],
      4,
      state,
    );
    expect(of(after.commands, 'verify').map((c) => [c.id, c.onto])).toEqual([['b', 'sa']]);
    const front = run([{ type: 'verify-inconclusive', id: 'b', generation: 1 }], 4, after.state);
    expect(of(front.commands, 'reject')).toMatchObject([{ id: 'b', reason: 'broken-base' }]);
  });

  it('rejects a change that conflicts with its tip when it is built, without a verification', () => {
    const { state, commands } = run([
      { type: 'join', change: change('a') },
      { type: 'join', change: change('b') },
      { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: true },
      { type: 'build-rejected', id: 'b', generation: 1, reason: 'replay-conflict', message: 'src/x.js' },
    ]);
    expect(of(commands, 'reject')).toMatchObject([{ id: 'b', reason: 'replay-conflict' }]);
    expect(of(commands, 'verify').map((c) => c.id)).toEqual(['a']);
    expect(state.entries.map((e) => e.id)).toEqual(['a']);
  });

  it('rebuilds everything on a head that moved under it, and ignores a change joining twice', () => {
    const { state, commands } = run([
      { type: 'join', change: change('a') },
      { type: 'join', change: change('a') },
      { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
      { type: 'head-moved', head: 'h1' },
    ]);
    expect(of(commands, 'build').map((c) => [c.generation, c.onto])).toEqual([
      [1, HEAD],
      [2, 'h1'],
    ]);
    expect(state).toMatchObject({ head: 'h1', entries: [{ id: 'a', stage: 'building', generation: 2 }] });
  });

  it('never issues more verifications than its slots, whatever the order of events', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    let state = emptyIntegration(HEAD, 3);
    let active = 0;
    let peak = 0;
    const apply = (event: IntegrationEvent) => {
      const step = advance(state, event);
      state = step.state;
      active += of(step.commands, 'verify').length;
      peak = Math.max(peak, active);
    };
    for (const id of ids) apply({ type: 'join', change: change(id) });
    for (const id of ids) apply({ type: 'built', id, generation: 1, commit: `s${id}`, needsGate: true });
    for (const id of ['c', 'a', 'b']) {
      active--;
      apply({ type: 'verified', id, generation: 1 });
    }
    expect(peak).toBe(3);
    expect(state.entries.filter((e) => e.stage === 'verifying').map((e) => e.id)).toEqual(['d', 'e', 'f']);
  });

  describe('when episodes take their place before their own gate', () => {
    const gatedChange = (id: string, onto: string, commit: string) => ({ id, task: `t-${id}`, candidate: commit, base: onto, source: `cand-${id}` });

    it('builds each reservation on the one ahead, gated or not, and issues no verification for it', () => {
      const { state, commands } = run([
        { type: 'reserve', change: change('a') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
        { type: 'reserve', change: change('b') },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: false },
      ]);
      expect(of(commands, 'build').map((c) => [c.id, c.onto, c.reserve])).toEqual([
        ['a', HEAD, true],
        ['b', 'sa', true],
      ]);
      expect(of(commands, 'verify')).toEqual([]);
      expect(state.entries.map((e) => [e.id, e.stage])).toEqual([
        ['a', 'gating'],
        ['b', 'gating'],
      ]);
    });

    it('lands each change its episode gated where it stands, in order, with no second gate', () => {
      const { commands } = run([
        { type: 'reserve', change: change('a') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
        { type: 'reserve', change: change('b') },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: false },
        // b's gate ends first: it waits for a.
        { type: 'gated', id: 'b', commit: 'sb', change: gatedChange('b', 'sa', 'sb') },
        { type: 'gated', id: 'a', commit: 'sa', change: gatedChange('a', HEAD, 'sa') },
        { type: 'landed', id: 'a', commit: 'sa' },
      ]);
      expect(of(commands, 'verify')).toEqual([]);
      expect(of(commands, 'land').map((c) => [c.id, c.commit, c.expected, c.verifiedOn, c.change.candidate])).toEqual([
        ['a', 'sa', HEAD, null, 'sa'],
        ['b', 'sb', 'sa', null, 'sb'],
      ]);
    });

    it('lands nothing of a change whose episode has not answered, even when a verification passed it', () => {
      const { state, commands } = run([
        { type: 'reserve', change: change('a') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
        { type: 'head-moved', head: 'h1' },
        { type: 'built', id: 'a', generation: 2, commit: 'sa2', needsGate: true },
        { type: 'verified', id: 'a', generation: 2 },
      ]);
      expect(of(commands, 'build').at(-1)).toMatchObject({ id: 'a', generation: 2, onto: 'h1', change: { ungated: true } });
      expect(of(commands, 'build').at(-1)).not.toHaveProperty('reserve');
      expect(of(commands, 'land')).toEqual([]);
      const answered = run([{ type: 'gated', id: 'a', commit: 'sa', change: gatedChange('a', HEAD, 'sa') }], 4, state);
      // Its own gate judged the stale commit: what lands is the rebuilt one, with its verification.
      expect(of(answered.commands, 'land')).toMatchObject([{ id: 'a', commit: 'sa2', expected: 'h1', verifiedOn: 'h1', change: { candidate: 'sa' } }]);
    });

    it('builds again, and has verified, a change whose episode gated somewhere else', () => {
      const { state, commands } = run([
        { type: 'reserve', change: change('a') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
        { type: 'reserve', change: change('b') },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: false },
        // a's tip failed without it, so its episode gated it on its base instead.
        { type: 'gated', id: 'a', commit: 'cand-a', change: change('a') },
      ]);
      expect(
        of(commands, 'build')
          .slice(2)
          .map((c) => [c.id, c.generation, c.onto]),
      ).toEqual([['a', 2, HEAD]]);
      expect(state.entries.map((e) => [e.id, e.stage, e.generation])).toEqual([
        ['a', 'building', 2],
        ['b', 'waiting', 2],
      ]);
      const rebuilt = run([{ type: 'built', id: 'a', generation: 2, commit: 'sa2', needsGate: false }], 4, state);
      expect(of(rebuilt.commands, 'land')).toMatchObject([{ id: 'a', commit: 'sa2', verifiedOn: null }]);
      expect(of(rebuilt.commands, 'build')).toMatchObject([{ id: 'b', generation: 2, onto: 'sa2', change: { ungated: true } }]);
    });

    it('only drops a change whose episode has not answered when its build or verification fails, and rebuilds those behind', () => {
      const { state, commands } = run([
        { type: 'reserve', change: change('a') },
        { type: 'build-rejected', id: 'a', generation: 1, reason: 'replay-conflict', message: 'x' },
        { type: 'reserve', change: change('b') },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: false },
        { type: 'reserve', change: change('c') },
        { type: 'built', id: 'c', generation: 1, commit: 'sc', needsGate: false },
        { type: 'withdraw', id: 'b' },
      ]);
      expect(of(commands, 'reject')).toEqual([]);
      expect(of(commands, 'build').at(-1)).toMatchObject({ id: 'c', generation: 2, onto: HEAD });
      expect(state.entries.map((e) => e.id)).toEqual(['c']);
    });

    it('verifies a change handed over unjudged, and lands it only with that verification, even if it names the commit it holds', () => {
      // b's gate failed on sb, behind a, which then failed: b's place is rebuilt on the head and verified there.
      const { state, commands } = run([
        { type: 'reserve', change: change('a') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
        { type: 'reserve', change: change('b') },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: false },
        { type: 'withdraw', id: 'a' },
        { type: 'built', id: 'b', generation: 2, commit: 'sb2', needsGate: true },
        { type: 'gated', id: 'b', commit: 'sb', change: { ...gatedChange('b', 'sa', 'sb'), ungated: true } },
      ]);
      expect(of(commands, 'verify')).toMatchObject([{ id: 'b', generation: 2, commit: 'sb2', onto: HEAD }]);
      expect(of(commands, 'land')).toEqual([]);
      expect(state.entries[0]).toMatchObject({ id: 'b', stage: 'verifying', ungated: true, pending: false });
      const verified = run([{ type: 'verified', id: 'b', generation: 2 }], 4, state);
      expect(of(verified.commands, 'land')).toMatchObject([{ id: 'b', commit: 'sb2', verifiedOn: HEAD, change: { candidate: 'sb', ungated: true } }]);
      // Handed over while its reserved build still stood (it cannot be, but if it were): verified, never taken as gated.
      const standing = run([
        { type: 'reserve', change: change('c') },
        { type: 'built', id: 'c', generation: 1, commit: 'sc', needsGate: false },
        { type: 'gated', id: 'c', commit: 'sc', change: { ...gatedChange('c', HEAD, 'sc'), ungated: true } },
      ]);
      expect(of(standing.commands, 'land')).toEqual([]);
      expect(of(standing.commands, 'build').at(-1)).toMatchObject({ id: 'c', generation: 2, change: { ungated: true } });
    });

    it('says a failed place stands on judged changes only once each one ahead passed, and moved once one ahead is given up', () => {
      const reserved = run([
        { type: 'reserve', change: change('a') },
        { type: 'built', id: 'a', generation: 1, commit: 'sa', needsGate: false },
        { type: 'reserve', change: change('b') },
        { type: 'built', id: 'b', generation: 1, commit: 'sb', needsGate: false },
      ]).state;
      // a's own gate is still running: b's failure on sb cannot be charged yet.
      expect(judgedAhead(reserved, 'b', 'sb')).toBeNull();
      // The front one has nothing ahead of it.
      expect(judgedAhead(reserved, 'a', 'sa')).toBe('passed');
      const aPassed = run([{ type: 'gated', id: 'a', commit: 'sa', change: gatedChange('a', HEAD, 'sa') }], 4, reserved).state;
      expect(judgedAhead(aPassed, 'b', 'sb')).toBe('passed');
      // Asked about a commit that is no longer its place: moved.
      expect(judgedAhead(aPassed, 'b', 'stale')).toBe('moved');
      const aFailed = run([{ type: 'withdraw', id: 'a' }], 4, reserved).state;
      expect(judgedAhead(aFailed, 'b', 'sb')).toBe('moved');
      expect(judgedAhead(aFailed, 'gone', 'sx')).toBe('moved');
    });
  });
});
