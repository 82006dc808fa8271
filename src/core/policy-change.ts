// A change of policy applied to an agent's plain policy data (SEMANTICS §15): what the agent's
// policy would be once the change were made for real, for a preview to compile and replay against.
// The data given is never changed; a change that does not reach the agent gives it back as it is.
import type { AgentPolicyData, AttachmentPolicy, CapRule, GateRule } from './types';

/** The id a preview gives an attachment that does not exist yet: after every real one, as attaching puts it. */
const NEW_ATTACHMENT_ID = 0;

/** The terms of an attachment that a change may set; a field left out keeps the live one. */
export interface AttachmentTerms {
  rules?: readonly GateRule[];
  caps?: readonly CapRule[];
  /** Approver patterns, or null for no approval. */
  approvers?: readonly string[] | null;
  allow_proactive?: boolean;
}

export type PolicyChange =
  | {
      kind: 'attach';
      agent_id: number;
      toolkit: { toolkit_id: number; toolkit_name: string; member_tool_ids: readonly string[] };
      terms: AttachmentTerms;
    }
  | { kind: 'update'; agent_id: number; attachment_id: number; terms: AttachmentTerms }
  | { kind: 'detach'; agent_id: number; attachment_id: number }
  | { kind: 'toolkit'; toolkit_id: number; member_tool_ids: readonly string[] }
  | { kind: 'access_rules'; agent_id: number; rules: readonly GateRule[] };

/** Whether the change reaches the agent's policy: it names the agent, or a toolkit one of its attachments holds. */
export function reaches(change: PolicyChange, data: AgentPolicyData): boolean {
  if (change.kind === 'toolkit') return data.attachments.some((a) => a.toolkit_id === change.toolkit_id);
  return change.agent_id === data.agent_id;
}

export function applyChange(data: AgentPolicyData, change: PolicyChange): AgentPolicyData {
  if (!reaches(change, data)) return data;
  switch (change.kind) {
    case 'attach':
      return {
        ...data,
        attachments: [
          ...data.attachments,
          withTerms(
            {
              attachment_id: NEW_ATTACHMENT_ID,
              ...change.toolkit,
              allow_proactive: false,
              rules: [],
              approvers: null,
              caps: [],
            },
            change.terms,
          ),
        ],
      };
    case 'update':
      return {
        ...data,
        attachments: data.attachments.map((a) => (a.attachment_id === change.attachment_id ? withTerms(a, change.terms) : a)),
      };
    case 'detach':
      return { ...data, attachments: data.attachments.filter((a) => a.attachment_id !== change.attachment_id) };
    case 'toolkit':
      return {
        ...data,
        attachments: data.attachments.map((a) =>
          a.toolkit_id === change.toolkit_id ? { ...a, member_tool_ids: [...change.member_tool_ids] } : a,
        ),
      };
    case 'access_rules':
      return { ...data, access_rules: [...change.rules] };
    default:
      return unknownChange(change);
  }
}

function withTerms(attachment: AttachmentPolicy, terms: AttachmentTerms): AttachmentPolicy {
  return {
    ...attachment,
    ...(terms.rules !== undefined ? { rules: [...terms.rules] } : {}),
    ...(terms.caps !== undefined ? { caps: [...terms.caps] } : {}),
    ...(terms.approvers !== undefined ? { approvers: terms.approvers === null ? null : [...terms.approvers] } : {}),
    ...(terms.allow_proactive !== undefined ? { allow_proactive: terms.allow_proactive } : {}),
  };
}

function unknownChange(change: never): never {
  throw new TypeError(`Unknown policy change ${JSON.stringify((change as { kind?: unknown }).kind)}.`);
}
