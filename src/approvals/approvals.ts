// Deciding approval requests (SEMANTICS §12), whoever decides: an operator through the admin API or
// the dashboard, or an approver's message in the request's own thread. A decision is taken on the
// policy as it stands in the database at that moment: the approver must match the attachment's
// approvers now, and the attachment must still grant the tool to the requester, else the request
// is void. Approval runs the stored input once, through the requester's run, before it answers.
import { orUnavailable } from '../db/unavailable';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors';
import { decodeCursor, encodeCursor } from '../core/page-cursor';
import type { RunService } from '../run/run-service';
import type { DispatchRun } from '../run/tool-run';
import { decidedBy, type ApprovalRequestView, type ApprovalResult, type ApprovalStatus, type Decider } from '../core/approval-request';
import type { ApprovalStore } from './approval-store';

export type Decision = 'approve' | 'deny';

/** How a request ended, for metrics. */
export type ApprovalOutcome = 'approved' | 'denied' | 'void';

export class ApprovalService {
  constructor(
    private readonly runs: RunService,
    readonly store: ApprovalStore,
    private readonly observe: (outcome: ApprovalOutcome) => void = () => undefined,
  ) {}

  list(agentId: number, options: { status?: ApprovalStatus; limit: number }): Promise<ApprovalRequestView[]> {
    return orUnavailable(this.store.list(agentId, options));
  }

  /**
   * A page of the agent's requests, newest first, each page below the last id the previous one
   * showed (the order of the index on (agent_id, id)); `next` is the cursor of the page after it.
   */
  async page(
    agentId: number,
    options: { status?: ApprovalStatus | undefined; limit: number; after?: string | undefined },
  ): Promise<{ requests: ApprovalRequestView[]; next: string | null }> {
    let beforeId: number | undefined;
    if (options.after !== undefined) {
      const key = decodeCursor(options.after, ['id']);
      if (key === null)
        throw new ValidationError([
          {
            loc: ['query', 'after'],
            msg: 'not a cursor of these requests: pass the `after` a page of them gave as its next (Toolgate-Next-Cursor), or none for the newest',
            type: 'invalid_cursor',
          },
        ]);
      beforeId = key[0] as number;
    }
    const rows = await orUnavailable(
      this.store.list(agentId, { status: options.status, limit: options.limit + 1, ...(beforeId !== undefined ? { beforeId } : {}) }),
    );
    const requests = rows.slice(0, options.limit);
    const last = requests[requests.length - 1];
    return { requests, next: rows.length > options.limit && last ? encodeCursor([last.id]) : null };
  }

  async get(agentId: number, id: number): Promise<ApprovalRequestView> {
    const request = await orUnavailable(this.store.find(agentId, id));
    if (!request) throw new NotFoundError(`Approval request ${id} of agent ${agentId}`);
    return request;
  }

  /**
   * Decides a pending request. `thread` is the thread reference of the deciding message, which must
   * be the request's own. 409 when it is no longer pending (nothing runs), 403 when a message's
   * sender is not an approver of its attachment.
   */
  async decide(agentId: number, id: number, decision: Decision, decider: Decider, thread?: string): Promise<ApprovalRequestView> {
    const request = await this.get(agentId, id);
    if (decider.via === 'message' && (thread === undefined || request.requested_by.thread_id !== thread)) {
      throw new ForbiddenError(
        `Approval request ${id} was not filed in this thread: a message decides only the requests of its own thread.`,
      );
    }
    if (request.status !== 'pending') throw notPending(request);
    // The requester's run, resolved from the policy as it is now: the grant and the approvers today.
    // An operator's denial needs neither.
    const run = decider.via === 'message' || decision === 'approve' ? await this.runs.startFresh(agentId, requesterRun(request)) : null;
    if (decider.via === 'message' && !run?.compiled.mayDecide(request.attachment_id, decider.routing_key)) {
      throw new ForbiddenError(
        `${decider.routing_key} is not an approver of the attachment that approval request ${id} is bound to: nothing was decided.`,
      );
    }
    if (decision === 'deny' || run === null) {
      if (!(await orUnavailable(this.store.deny(agentId, id, decider)))) throw notPending(await this.get(agentId, id));
      this.observe('denied');
      return this.get(agentId, id);
    }
    const outcome = await run.executeApproved(request, decider);
    switch (outcome.status) {
      case 'taken':
        throw notPending(await this.get(agentId, id));
      case 'not_granted': {
        if (await orUnavailable(this.store.void(agentId, id, outcome.reason))) this.observe('void');
        throw notPending(await this.get(agentId, id));
      }
      case 'capped':
        // It stays pending: an approver may approve it again once the window has room.
        throw outcome.error;
      default: {
        const result: ApprovalResult =
          outcome.status === 'success' ? { status: 'success', output: outcome.output } : { status: 'failure', error: outcome.error };
        this.observe('approved');
        // The tool has run: its result is the answer, even if it can no longer be kept or read back.
        try {
          await this.store.storeResult(id, result);
          return await this.store.get(agentId, id);
        } catch {
          return { ...request, status: 'approved', decided_by: decidedBy(decider), decided_at: new Date().toISOString(), result };
        }
      }
    }
  }
}

function requesterRun(request: ApprovalRequestView): DispatchRun {
  return request.requested_by.run === 'scheduled'
    ? { kind: 'scheduled' }
    : { kind: 'sender', routing_key: request.requested_by.routing_key };
}

/** The 409 for a request already decided, expired or void: what it is, and that nothing ran. */
function notPending(request: ApprovalRequestView): ConflictError {
  const why = request.status === 'void' && request.void_reason ? ` (${request.void_reason})` : '';
  return new ConflictError(
    `Approval request ${request.id} is ${request.status}${why}, so it cannot be decided again: nothing ran. A new call files a new request.`,
  );
}
