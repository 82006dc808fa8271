// An approval request as plain data (SEMANTICS §12): a call that did not run, with the exact input
// it was validated with, who asked and where, and how it was decided. The store keeps them; the run
// files and runs them; the routes and the dashboard show them.
import { z } from 'zod';
import type { DispatchKind } from './types';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'void'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const decidedViaSchema = z.enum(['message', 'admin', 'dashboard']);
export type DecidedVia = z.infer<typeof decidedViaSchema>;

/** Who decides: an approver's message (its routing key), or an operator through the admin API or the dashboard. */
export type Decider = { via: 'message'; routing_key: string } | { via: 'admin' | 'dashboard' };

/** What came of an approved request's one execution. */
export type ApprovalResult = { status: 'success'; output: unknown } | { status: 'failure'; error: string };

export interface ApprovalRequestView {
  id: number;
  agent_id: number;
  /** What an approver writes after "approve" or "deny" to decide this request, and no other (SEMANTICS §12a). */
  code: string;
  tool: string;
  /** The exact input the call was validated with: what approval runs, unchanged. */
  input: unknown;
  status: ApprovalStatus;
  requested_by: {
    run: DispatchKind;
    routing_key: string | null;
    /** The thread's reference, for a request filed in a thread. */
    thread_id: string | null;
    run_id: number | null;
    message_id: string | null;
  };
  attachment_id: number;
  decided_by: { via: DecidedVia; routing_key: string | null } | null;
  decided_at: string | null;
  /** Why a void request is void: its attachment was detached, its approvers changed, it no longer grants. */
  void_reason: string | null;
  /** An approved request's outcome; null until its one execution ends (or when it never did). */
  result: ApprovalResult | null;
  created_at: string;
  expires_at: string;
}

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
