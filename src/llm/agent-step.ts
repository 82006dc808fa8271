// One step of an agent run as a model sees it (SEMANTICS §10): the run's tools, the conversation so
// far, and the model's answer, either tool calls or the reply. Both model providers speak this.
import type { ModelContext } from './model-context';

/** A tool as the model is offered it: what it is for, and the JSON Schema of its input. */
export interface AgentToolSpec {
  id: string;
  display_name: string;
  summary: string;
  input_schema: Record<string, unknown>;
}

/** A message the agent handles: a sender's email in a thread. */
export interface InboundMessage {
  from: string;
  subject?: string;
  body: string;
  message_id?: string;
}

/**
 * The conversation, oldest first: a thread's earlier messages with their tool calls, results and
 * replies, then the message at hand. A result carries what the tool gave back, its failure, or the
 * refusal of a tool the run was not offered.
 */
export type AgentTurn =
  | { role: 'inbound'; message: InboundMessage }
  | { role: 'instruction'; text: string }
  | { role: 'tool_call'; call_id: string; tool: string; arguments: string }
  | { role: 'tool_result'; call_id: string; tool: string; status: 'success' | 'failure' | 'denied'; output?: unknown; error?: string }
  | { role: 'reply'; text: string };

export interface AgentStepRequest {
  context: ModelContext;
  tools: readonly AgentToolSpec[];
  turns: readonly AgentTurn[];
}

/** A tool call as the model wrote it: its arguments are the model's text, parsed by the run loop. */
export interface AgentToolCall {
  call_id: string;
  tool: string;
  arguments: string;
}

export type AgentStepResult = { kind: 'tool_calls'; calls: AgentToolCall[] } | { kind: 'reply'; text: string };
