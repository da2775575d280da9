import { agentConfigForAttempt, type AgentConfig } from '../manifest/agent-config.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { Agent, AgentRunInput, AgentRunResult } from './agent.js';

/**
 * One agent per rotation entry; attempt n of a task runs entry (n-1) mod length. The episode
 * picks the entry with {@link agentForAttempt}, so the ledger names the agent that really ran.
 */
export class RotatingAgent implements Agent {
  readonly label: string;

  constructor(readonly agents: readonly Agent[]) {
    this.label = `rotation(${agents.map((a) => a.label).join(' | ')})`;
  }

  forAttempt(attempt: number): Agent {
    return this.agents[(Math.max(1, attempt) - 1) % this.agents.length]!;
  }

  run(input: AgentRunInput): Promise<AgentRunResult> {
    return this.forAttempt(input.attempt).run(input);
  }
}

/** The agent that runs attempt `attempt`: the rotation's entry for it, or `agent` itself. */
export function agentForAttempt(agent: Agent, attempt: number): Agent {
  return agent instanceof RotatingAgent ? agent.forAttempt(attempt) : agent;
}

/** Builds one agent per rotation entry with `create` (the composition root's factory). */
export async function createRotatingAgent(agent: WorldManifest['agent'], create: (config: AgentConfig) => Promise<Agent>): Promise<RotatingAgent> {
  const agents: Agent[] = [];
  for (let attempt = 1; attempt <= agent.rotation.length; attempt++) agents.push(await create(agentConfigForAttempt(agent, attempt)));
  return new RotatingAgent(agents);
}
