// Reads an approver's message for decisions and carries them out (SEMANTICS §12a), before any model
// runs: toolgate, not a model, decides. Only the sender's own text counts (the body without quoted
// history, forwarded parts and the signature; never the Subject), and only the requests pending in
// the message's thread that this sender may decide. What it decided, and what it left pending with
// the codes that decide them, is what the model is then told and the reply says.
import type { ApprovalService } from '../approvals/approvals';
import { readDecision, NO_DECISION_WORDS } from '../core/approval-decision';
import { requesterName, type ApprovalRequestView } from '../core/approval-request';
import { canonicalJson } from '../core/canonical-json';
import { HttpError } from '../errors';
import type { ToolRun } from '../run/tool-run';
import { NO_DECISIONS, type DecidedRequest, type RunDecisions } from '../core/run-decisions';

export async function decideByMessage(
  approvals: ApprovalService,
  run: ToolRun,
  thread: string,
  /** The message's own words (ownText): never its Subject, quoted history or signature. */
  ownWords: string,
  decidable: readonly ApprovalRequestView[],
): Promise<RunDecisions> {
  const approver = run.routingKey;
  if (decidable.length === 0 || approver === null) return NO_DECISIONS;
  const reading = readDecision(
    ownWords,
    decidable.map((r) => ({ id: r.id, code: r.code, input: canonicalJson(r.input ?? null) })),
  );
  const decided: DecidedRequest[] = [];
  const failed = new Map<number, string>();
  for (const { request_id, decision } of reading.kind === 'decides' ? reading.decisions : []) {
    try {
      const request = await approvals.decide(run.agentId, request_id, decision, { via: 'message', routing_key: approver }, thread);
      decided.push({
        request_id,
        tool: request.tool,
        input: request.input,
        requested_by: request.requested_by.routing_key,
        status: decision === 'approve' ? 'approved' : 'denied',
        ...(request.result ? { result: request.result } : {}),
      });
    } catch (err) {
      // Decided meanwhile (409), no longer this sender's to decide (403), over a cap (403: it stays
      // pending): the approver is told why. Toolgate's own fault after another decision ran its tool
      // is said the same way, since the answer must then say what ran (SEMANTICS §13).
      if (err instanceof HttpError && (err.status === 403 || err.status === 404 || err.status === 409)) failed.set(request_id, err.message);
      else if (decided.length > 0) failed.set(request_id, run.fault(err, 'approval decision'));
      else throw err;
    }
  }
  const why = reading.kind === 'none' ? NO_DECISION_WORDS[reading.reason] : 'the message does not decide it';
  const undecided = decidable
    .filter((r) => !decided.some((d) => d.request_id === r.id))
    .map((r) => ({
      request_id: r.id,
      code: r.code,
      tool: r.tool,
      input: r.input,
      requested_by: requesterName(r.requested_by),
      reason: failed.get(r.id) ?? why,
    }));
  return { decided, undecided };
}
