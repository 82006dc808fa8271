// The tools offered to one run and why (SEMANTICS §5), read straight off the policy data: the
// reference that the compiled policy must always agree with.
import { decideAccess, decideAttachment, needsApproval } from './gate';
import type { AgentPolicyData, AttachmentExplanation, AttachmentPolicy, CapRule, GateDecision, Resolution, Run } from './types';

export function resolveRun(data: AgentPolicyData, run: Run, liveToolIds: ReadonlySet<string>): Resolution {
  const access = decideAccess(data.access_rules ?? [], run);
  return resolutionOf(
    run,
    access,
    data.attachments.map((attachment) => explainAttachment(attachment, run, liveToolIds)),
  );
}

/**
 * The run's resolution from its access decision and explained attachments: the union of what the
 * admitting ones carry, or nothing when the agent's access rules refuse the sender.
 */
export function resolutionOf(run: Run, access: GateDecision | null, attachments: AttachmentExplanation[]): Resolution {
  // Grants only add: the offer is a union, and nothing an attachment refuses is subtracted from it.
  const admitting = access?.admitted === false ? [] : attachments.filter((a) => a.admitted);
  const offered = [...new Set(admitting.flatMap((a) => a.tools))];
  // Approval binds only its own attachment: a tool another admitting attachment carries without
  // approval (or whose approvers include this run's key) is offered on that one's terms.
  const direct = new Set(admitting.filter((a) => !a.needs_approval).flatMap((a) => a.tools));
  return {
    run: run.kind,
    routing_key: run.kind === 'sender' ? run.routing_key : null,
    access,
    tools: offered.sort(),
    needs_approval: offered.filter((id) => !direct.has(id)).sort(),
    capped: offered.filter((id) => termsOf(admitting, id, direct.has(id)).every((a) => capsOnTool(a.caps, id).length > 0)).sort(),
    attachments,
  };
}

/** The caps that apply to a call of a tool: those on it, and those on all members. */
export function capsOnTool<C extends CapRule>(caps: readonly C[], toolId: string): C[] {
  return caps.filter((cap) => cap.tool_id === null || cap.tool_id === toolId);
}

/**
 * The attachments on whose terms a run calls an offered tool: every one that offers it without
 * approval, or, when all need approval, the first, under which a request is filed.
 */
function termsOf(admitting: readonly AttachmentExplanation[], toolId: string, direct: boolean): AttachmentExplanation[] {
  const carriers = admitting.filter((a) => a.tools.includes(toolId) && (!direct || !a.needs_approval));
  return direct ? carriers : carriers.slice(0, 1);
}

/** A toolkit's members split into registered tools and stale ids, each once, in member order. */
export function splitMembers(
  memberToolIds: readonly string[],
  liveToolIds: ReadonlySet<string>,
): { tools: string[]; stale_tool_ids: string[] } {
  const members = [...new Set(memberToolIds)];
  return {
    tools: members.filter((id) => liveToolIds.has(id)),
    stale_tool_ids: members.filter((id) => !liveToolIds.has(id)),
  };
}

function explainAttachment(attachment: AttachmentPolicy, run: Run, liveToolIds: ReadonlySet<string>): AttachmentExplanation {
  return {
    attachment_id: attachment.attachment_id,
    toolkit_id: attachment.toolkit_id,
    toolkit_name: attachment.toolkit_name,
    ...decideAttachment(attachment, run),
    ...splitMembers(attachment.member_tool_ids, liveToolIds),
    ...approvalTerms(attachment, run),
    caps: (attachment.caps ?? []).map((cap) => ({ ...cap })),
  };
}

/** An attachment's approval terms, and whether they apply to this run (SEMANTICS §12). */
export function approvalTerms(
  attachment: Pick<AttachmentPolicy, 'approvers'>,
  run: Run,
): Pick<AttachmentExplanation, 'approval' | 'needs_approval'> {
  const approvers = attachment.approvers ?? null;
  return { approval: approvers === null ? null : { approvers: [...approvers] }, needs_approval: needsApproval(approvers, run) };
}
