// What attaching a toolkit with an open gate would hand to every sender (SEMANTICS §1, §5), and
// whether the operator has agreed to exactly that. A gate tool is refused to a run it is not
// offered, so an open gate is a grant to everyone; an enhancement tool never refuses a run, and a
// stale member is offered to no one, so neither needs the operator's yes.
import type { ToolManifest } from '../../core/tool-manifest';
import type { ToolDefinition } from '../../core/types';
import type { RuleInput } from '../../services/attachment-inputs';
import type { ToolkitView } from '../../services/toolkits';

export interface OpenGateGrant {
  /** The live gate members: what every sender would be offered. */
  gate: ToolDefinition[];
  /** The live enhancement members. */
  enhancement: ToolDefinition[];
}

export function openGateGrant(toolkit: Pick<ToolkitView, 'member_tool_ids'>, manifest: Pick<ToolManifest, 'get'>): OpenGateGrant {
  const live = toolkit.member_tool_ids.map((id) => manifest.get(id)).filter((t): t is ToolDefinition => t !== undefined);
  return { gate: live.filter((t) => t.kind === 'gate'), enhancement: live.filter((t) => t.kind === 'enhancement') };
}

/** The confirmation form names the gate tools it was shown, so a member added since is asked about anew. */
export function confirmedTools(grant: OpenGateGrant): string {
  return grant.gate.map((t) => t.id).join(',');
}

/** The gate tools the operator has not agreed to give every sender: none once the confirmation covers them all. */
export function unconfirmed(grant: OpenGateGrant, confirmed: string): ToolDefinition[] {
  const agreed = new Set(confirmed.split(',').filter((id) => id !== ''));
  return grant.gate.filter((t) => !agreed.has(t.id));
}

/** The attach form's "Admit only" field: allow patterns, separated by commas, spaces or lines. */
export function allowRules(text: string): RuleInput[] {
  return text
    .split(/[\s,]+/)
    .filter((pattern) => pattern !== '')
    .map((pattern) => ({ kind: 'allow', pattern }));
}
