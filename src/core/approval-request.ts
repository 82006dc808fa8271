// An approval request as plain data (SEMANTICS §12): a call that did not run, with the exact input
// it was validated with, who asked and where, and how it was decided. The store keeps them; the run
// files and runs them; the routes and the dashboard show them.
import { z } from 'zod';
import { dispatchKindSchema, type DispatchKind } from './types';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'void'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const decidedViaSchema = z.enum(['message', 'admin', 'dashboard']);
export type DecidedVia = z.infer<typeof decidedViaSchema>;

/** Who decides: an approver's message (its routing key), or an operator through the admin API or the dashboard. */
export type Decider = { via: 'message'; routing_key: string } | { via: 'admin' | 'dashboard' };

/** What came of an approved request's one execution. */
const approvalResultSchema = z.union([
  z.object({ status: z.literal('success'), output: z.unknown() }),
  z.object({ status: z.literal('failure'), error: z.string() }),
]);
export type ApprovalResult = z.output<typeof approvalResultSchema>;

/** A request as the routes, the dashboard and a run's answer show it. */
export const approvalRequestViewSchema = z.object({
  id: z.number().int(),
  agent_id: z.number().int(),
  code: z.string().describe('what an approver writes after "approve" or "deny" to decide this request, and no other'),
  tool: z.string(),
  input: z.unknown().describe('the exact input the call was validated with: what approval runs, unchanged'),
  status: z.enum(APPROVAL_STATUSES),
  requested_by: z.object({
    run: dispatchKindSchema,
    routing_key: z.string().nullable(),
    /** The thread's reference, for a request filed in a thread. */
    thread_id: z.string().nullable(),
    run_id: z.number().int().nullable(),
    message_id: z.string().nullable(),
  }),
  attachment_id: z.number().int(),
  decided_by: z.object({ via: decidedViaSchema, routing_key: z.string().nullable() }).nullable(),
  decided_at: z.string().nullable(),
  /** Why a void request is void: its attachment was detached, its approvers changed, it no longer grants. */
  void_reason: z.string().nullable(),
  result: approvalResultSchema.nullable().describe("an approved request's one execution: what it gave"),
  created_at: z.string(),
  expires_at: z.string(),
});
export type ApprovalRequestView = z.output<typeof approvalRequestViewSchema>;

/** A call to file: where it was asked (its scope keeps one pending request per call there). */
export interface NewApprovalRequest {
  agent_id: number;
  attachment_id: number;
  tool_id: string;
  input: unknown;
  run: DispatchKind;
  routing_key: string | null;
  thread_id: number | null;
  run_id: number | null;
  message_id: string | null;
  /** How long it waits for its decision, from when the database files it (one clock for every instance). */
  expires_in_ms: number;
}

/** Who asked, in words: a sender's routing key, a sender with none (unauthenticated), or a scheduled run. */
export function requesterName(requested: Pick<ApprovalRequestView['requested_by'], 'run' | 'routing_key'>): string {
  if (requested.run === 'scheduled') return 'a scheduled run';
  return requested.routing_key ?? 'a sender with no routing key (unauthenticated)';
}

/** Who decided, as a request says it: the door, and the approver's routing key for a message. */
export function decidedBy(decider: Decider): NonNullable<ApprovalRequestView['decided_by']> {
  return { via: decider.via, routing_key: decider.via === 'message' ? decider.routing_key : null };
}

/** The `approved_by` of an execution's record: the approver's routing key, or the operator's door. */
export function approverName(decider: Decider): string {
  return decider.via === 'message' ? decider.routing_key : decider.via;
}
