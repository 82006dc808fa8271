// The tools offered to one run and why (SEMANTICS §5), read straight off the policy data: the
// reference that the compiled policy must always agree with.
import { decideAccess, decideAttachment } from './gate';
import type { AgentPolicyData, AttachmentExplanation, AttachmentPolicy, GateDecision, Resolution, Run } from './types';

export function resolveRun(data: AgentPolicyData, run: Run, liveToolIds: ReadonlySet<string>): Resolution {
  const access = decideAccess(data.access_rules ?? [], run);
  return resolutionOf(run, access, data.attachments.map((attachment) => explainAttachment(attachment, run, liveToolIds)));
}

/**
 * The run's resolution from its access decision and explained attachments: the union of what the
 * admitting ones carry, or nothing when the agent's access rules refuse the sender.
 */
export function resolutionOf(run: Run, access: GateDecision | null, attachments: AttachmentExplanation[]): Resolution {
  // Grants only add: the offer is a union, and nothing an attachment refuses is subtracted from it.
  const offered = access?.admitted === false ? [] : [...new Set(attachments.filter((a) => a.admitted).flatMap((a) => a.tools))];
  return {
    run: run.kind,
    routing_key: run.kind === 'sender' ? run.routing_key : null,
    access,
    tools: offered.sort(),
    attachments,
  };
}

/** A toolkit's members split into registered tools and stale ids, each once, in member order. */
export function splitMembers(memberToolIds: readonly string[], liveToolIds: ReadonlySet<string>): { tools: string[]; stale_tool_ids: string[] } {
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
  };
}
