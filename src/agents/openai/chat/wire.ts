/**
 * The parts of the OpenAI Chat Completions wire format the `openai` adapter speaks. Servers that
 * implement it (OpenAI, vLLM, llama.cpp's server, Ollama, most hosted gateways) accept these
 * requests; fields they add to responses are ignored.
 */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  tool_choice: 'auto';
}

export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

export interface ChatResponse {
  id?: string;
  model?: string;
  choices: Array<{
    index?: number;
    finish_reason?: string | null;
    message: { role: 'assistant'; content?: string | null; tool_calls?: ToolCall[] | null };
  }>;
  usage?: ChatUsage | null;
}
