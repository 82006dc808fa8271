// One step of an agent run as a model sees it (SEMANTICS §10): the run's tools, the conversation so
// far, and the model's answer, either tool calls or the reply. Both model providers speak this.
import { z } from 'zod';
import type { RunDecisions } from '../core/run-decisions';
import type { ModelContext } from './model-context';

/** What came of one tool call of a run: it ran (and succeeded or failed), was refused, or became an approval request. */
export const stepStatusSchema = z.enum(['success', 'failure', 'denied', 'pending_approval']);
export type StepStatus = z.infer<typeof stepStatusSchema>;

/** A tool as the model is offered it: what it is for, and the JSON Schema of its input. */
export interface AgentToolSpec {
  id: string;
  display_name: string;
  summary: string;
  input_schema: Record<string, unknown>;
  /** A call of it is filed as an approval request for an approver to decide, and does not run now (SEMANTICS §12). */
  needs_approval?: boolean;
}

/** A message the agent handles: a sender's email in a thread. */
export const inboundMessageSchema = z.object({
  from: z.string(),
  to: z.array(z.string()).optional(),
  cc: z.array(z.string()).optional(),
  reply_to: z.string().optional(),
  subject: z.string().optional(),
  body: z.string(),
  message_id: z.string().optional(),
  in_reply_to: z.string().optional(),
  references: z.array(z.string()).optional(),
  /** Its RFC 3834 headers and their kin, as the relay saw them: an automatic reply never decides nor acts. */
  auto_submitted: z.string().optional(),
  precedence: z.string().optional(),
  x_autoreply: z.string().optional(),
  x_autorespond: z.string().optional(),
  /** Set on a message of the history whose body (or instruction) was cut to fit: its length before. */
  original_length: z.number().int().optional().describe('only on history a model read: the length of a body cut to fit'),
});
export type InboundMessage = z.output<typeof inboundMessageSchema>;

/**
 * The conversation, oldest first: a thread's earlier messages with their tool calls, results and
 * replies, then the message at hand. A result carries what the tool gave back, its failure, or the
 * refusal of a tool the run was not offered. A decision follows the message it was read in: what
 * toolgate (never a model) decided of the thread's approval requests from that message (SEMANTICS §12a).
 */
export type AgentTurn =
  | { role: 'inbound'; message: InboundMessage }
  | ({ role: 'decision' } & RunDecisions)
  | { role: 'instruction'; text: string }
  | { role: 'tool_call'; call_id: string; tool: string; arguments: string }
  | { role: 'tool_result'; call_id: string; tool: string; status: StepStatus; output?: unknown; error?: string }
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

/**
 * The model's answer: tool calls, or the reply. A reply may ask to copy the agent's escalation
 * address (`escalate`), when it passes on a request the agent cannot decide; the run copies that
 * one configured address and no other, so a model can never send the thread anywhere else.
 */
export type AgentStepResult = { kind: 'tool_calls'; calls: AgentToolCall[] } | { kind: 'reply'; text: string; escalate?: boolean };
