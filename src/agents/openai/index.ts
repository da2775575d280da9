export { OpenAIAgent, SYSTEM_PROMPT } from './openai-agent.js';
export type { OpenAIAgentOptions } from './openai-agent.js';
export { createOpenAIAgent } from './create-openai-agent.js';
export { ChatClient } from './chat/client.js';
export type { ChatClientOptions, ChatOutcome } from './chat/client.js';
export { TOOL_SPECS } from './tools.js';
