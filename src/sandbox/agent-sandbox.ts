/**
 * The agent sandbox port: where an agent's processes run. Unlike the gate's Sandbox (one shell
 * command, no network, output collected), an agent sandbox wraps a long-lived interactive process
 * (stdin, streaming output, its own process group) and gives it a network of its own to reach its
 * model.
 *
 * Contract every adapter keeps:
 * - The process sees the workspace read-write at its host path (so paths in the prompt and in git's
 *   alternates stay valid), its private HOME read-write, the paths in `readOnly` read-only, a
 *   private `/tmp`, and the system's programs; nothing else of the host: not other worlds, not the
 *   ledger, not the gate's work dirs, not the Docker socket, not the users' homes.
 * - Its environment is `env` and nothing else.
 * - As root, Genesis never runs the agent as root: it runs as a uid leased for the launch (no
 *   other live sandbox has it), which is given the workspace and HOME.
 * - `launch` only prepares; the caller spawns `file args` with `env` as the leader of a process
 *   group, kills the group at the end, and then awaits `dispose()`, which removes whatever the
 *   sandbox left behind (a container) even when the process was killed.
 */
export type AgentSandboxKind = 'docker' | 'bwrap' | 'none';

export interface AgentSandboxSpec {
  /** The agent's working directory; the only host directory it may change besides `home`. */
  workspace: string;
  /** The agent's private HOME (created if missing). */
  home: string;
  /** The whole environment of the agent; HOME is set to `home`. */
  env: Record<string, string>;
  /** Host paths the agent may read at their own path: the prompt file, the world's object store. */
  readOnly: readonly string[];
  /** Unique per launch: names the container. */
  name: string;
  /** Disk quota in MiB of each of the workspace, HOME and /tmp (`agent.limits.diskMb`); none when absent. */
  diskMb?: number;
  /** Files of the host's HOME (relative to it) shown read-only at the same place in `home` (`agent.homeFiles`). */
  homeFiles?: readonly string[];
  /**
   * The port on this host's loopback that the agent's model endpoints lead to: the episode's own
   * listener of the model gateway. Without it, each endpoint leads to itself.
   */
  modelPort?: number;
}

/** What to spawn on the host to start the agent inside its sandbox. */
export interface AgentLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Removes what the launch left behind; safe to call after any ending, and twice. */
  dispose(): Promise<void>;
  /** Whether the agent filled its disk quota (only with `diskMb`); asked before `dispose`. */
  diskFull?(): Promise<boolean>;
  /** Requests the egress proxy refused (only with an allow-list); asked before `dispose`. */
  egressRefused?(): number;
  /** Connections to a model endpoint that this host refused or could not open (a bridged endpoint); asked before `dispose`. */
  endpointFailures?(): number;
}

export interface AgentSandbox {
  readonly kind: AgentSandboxKind;
  /**
   * True when the agent runs the host's own programs, so a missing binary can be reported before
   * anything starts (false for a docker image that brings its own).
   */
  readonly hostBinaries: boolean;
  /** Resolves when agents can run here; rejects with a GenesisError whose hint says what to fix. */
  check(): Promise<void>;
  /**
   * The address of this host that an agent in this sandbox reaches (a docker network's gateway),
   * where its model gateway listens for it; absent when the agent meets its gateway on loopback
   * (unconfined, or bridged into its own namespace).
   */
  modelHost?(): Promise<string>;
  launch(argv: readonly string[], spec: AgentSandboxSpec): Promise<AgentLaunch>;
}
