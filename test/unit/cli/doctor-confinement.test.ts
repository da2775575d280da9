import { describe, expect, it } from 'vitest';
import { confinement } from '../../../src/cli/commands/doctor/checks.js';

/** The `confines` line of genesis doctor: what confines gates and agents here, and what is refused where nothing can. */
describe('genesis doctor: what confines what', () => {
  it('names the sandbox of gates and agents when both work', () => {
    expect(confinement('bwrap', { choice: 'auto', ok: true }, true)).toEqual({
      name: 'confines',
      status: 'ok',
      detail:
        'gates: bubblewrap, no network, as a leased unprivileged uid\nagents: bubblewrap with a network namespace of their own, as a leased unprivileged uid',
      hint: null,
    });
  });

  it('fails and says the work is refused, never run unconfined, where nothing can confine it', () => {
    const none = confinement(null, { choice: 'auto', ok: false }, true);
    expect(none.status).toBe('fail');
    expect(none.detail).toBe(
      'gates: nothing can confine them here, so they are refused (no-sandbox)\nagents: nothing can confine them here, so their episodes are refused (agent-sandbox-unavailable), never run unconfined',
    );
    expect(none.hint).toContain('docs/guides/kubernetes.md');
    // Without a world the agents are only assumed: their refusal warns, the gates' still fails.
    expect(confinement('docker', { choice: 'auto', ok: false }, false).status).toBe('warn');
  });

  it('warns when a world asks for no sandbox, and says so in capitals', () => {
    const check = confinement('none', { choice: 'none', ok: true }, true);
    expect(check.status).toBe('warn');
    expect(check.detail).toBe('gates: NOT confined (verify.sandbox: none)\nagents: NOT confined (agent.sandbox: none)');
    expect(confinement('bwrap', null, true).detail).toBe(
      "gates: bubblewrap, no network, as a leased unprivileged uid\nagents: the world's agents start no process (script or sim)",
    );
  });
});
