// The lines toolgate adds to a reply about approvals (SEMANTICS §12a): what the message decided, and
// for each request the run filed or left pending, the code that decides it. Written by toolgate, not
// the model, so what an approver reads of a request and how to decide it never rest on a model's
// words. They follow a signature delimiter, so an approver's client that quotes the reply without
// marking it still leaves them out of the approver's own text.
import { requesterName, type ApprovalRequestView } from '../core/approval-request';
import type { RunDecisions } from '../core/run-decisions';

/** The most of a request's input a notice shows. */
const INPUT_CHARS = 200;

export function approvalNotice(requested: readonly ApprovalRequestView[], decisions: RunDecisions): string | null {
  const lines: string[] = [];
  for (const d of decisions.decided) {
    const what = `Request ${d.request_id} (${callText(d.tool, d.input)})`;
    if (d.status === 'denied') lines.push(`${what} is denied: it will not run.`);
    else if (d.result?.status === 'failure') lines.push(`${what} is approved: it ran once, and failed: ${d.result.error}`);
    else lines.push(`${what} is approved: it ran once.`);
  }
  const told = new Set<number>();
  for (const u of decisions.undecided) {
    told.add(u.request_id);
    lines.push(
      `Request ${u.request_id} (${callText(u.tool, u.input)}, asked by ${u.requested_by}) is still pending: ${u.reason}. ${howToDecide(u.code)}`,
    );
  }
  for (const r of requested) {
    if (told.has(r.id) || r.status !== 'pending') continue;
    told.add(r.id);
    lines.push(
      `Request ${r.id} (${callText(r.tool, r.input)}, asked by ${requesterName(r.requested_by)}) awaits approval. ${howToDecide(r.code)}`,
    );
  }
  return lines.length === 0 ? null : `-- \n${lines.join('\n')}`;
}

function howToDecide(code: string): string {
  return `An approver decides it by replying "approve ${code}" or "deny ${code}".`;
}

function callText(tool: string, input: unknown): string {
  const json = JSON.stringify(input ?? {});
  return `${tool} ${json.length > INPUT_CHARS ? `${json.slice(0, INPUT_CHARS)}…` : json}`;
}
