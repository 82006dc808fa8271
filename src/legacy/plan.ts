// The enabled_tools planner: from an agent's legacy string and its current attachments (plain
// rows), what it must hold so that its access equals the legacy check. Pure, and the only planner:
// the bulk migration and the per-agent path (POST/PATCH with enabled_tools) both call it.
import { z } from 'zod';
import { legacyToolSetKey, mappedToolIds, readEnabledTools, type UnmatchedToken } from '../core/legacy-enabled-tools';

/** One attachment of the agent, with what the planner must know about its toolkit. */
export interface AgentAttachmentRow {
  attachment_id: number;
  toolkit_id: number;
  toolkit_name: string;
  /** 'operator' | 'default' | 'legacy'; anything else counts as an operator's. */
  origin: string;
  allow_proactive: boolean;
  rule_count: number;
  legacy_tool_set: string | null;
  member_tool_ids: readonly string[];
}

export interface LegacyAgentRow {
  id: number;
  name: string | null;
  enabled_tools: string | null;
  attachments: readonly AgentAttachmentRow[];
}

/** A toolkit the planner made (`legacy_tool_set` not null). */
export interface LegacyToolkitRow {
  id: number;
  name: string;
  legacy_tool_set: string;
  member_tool_ids: readonly string[];
}

export interface PlanOptions {
  /** The manifest's ids: only these are granted. */
  registeredIds: ReadonlySet<string>;
  /** Grant each mistyped token's suggestion too (the admin asked for it). */
  mapTypos: boolean;
  /** The legacy toolkits that exist, by `legacy_tool_set`. */
  toolkits: ReadonlyMap<string, LegacyToolkitRow>;
  /**
   * 'bulk' (the migration) leaves alone an agent that holds grants it did not make, or whose legacy
   * grant an operator has edited. 'agent' (a client just wrote the string) follows the string anyway,
   * beside the agent's other grants, as POST/PATCH always have.
   */
  scope: 'bulk' | 'agent';
}

export const skipReasonSchema = z.enum(['operator_attachments', 'edited_legacy_grant', 'edited_legacy_toolkit']);
export type SkipReason = z.infer<typeof skipReasonSchema>;

/** The agent's grant follows its string: after apply it holds exactly `tool_ids`, as one open attachment. */
export interface FollowPlan {
  kind: 'follow';
  agent_id: number;
  agent_name: string | null;
  /** What the agent holds after apply, sorted; empty: no legacy grant at all. */
  tool_ids: string[];
  /** The subset of `tool_ids` granted only by mapping a mistyped token (never without map_typos). */
  mapped_ids: string[];
  unmatched: UnmatchedToken[];
  /** Legacy attachments to remove (a grant for another set). */
  detach: number[];
  /** A legacy attachment of the `tool_ids` toolkit must be made. */
  attach: boolean;
  /** The toolkit for `tool_ids` when it exists; null when it must be made (or `tool_ids` is empty). */
  toolkit_id: number | null;
}

/** The agent is left as it is; the report says why. */
export interface SkipPlan {
  kind: 'skip';
  agent_id: number;
  agent_name: string | null;
  reason: SkipReason;
  detail: string;
  unmatched: UnmatchedToken[];
}

export type AgentPlan = FollowPlan | SkipPlan;

/** A legacy toolkit still stands for its set when nobody has edited its members. */
export function isSoundLegacyToolkit(toolkit: { legacy_tool_set: string | null; member_tool_ids: readonly string[] }): boolean {
  return toolkit.legacy_tool_set !== null && legacyToolSetKey(toolkit.member_tool_ids) === toolkit.legacy_tool_set;
}

/** Whether a plan writes anything. */
export function planChanges(plan: AgentPlan): boolean {
  return plan.kind === 'follow' && (plan.attach || plan.detach.length > 0);
}

export function planAgent(row: LegacyAgentRow, options: PlanOptions): AgentPlan {
  const reading = readEnabledTools(row.enabled_tools, options.registeredIds);
  const exact = reading.tool_ids;
  const mapped = mappedToolIds(reading);
  const skip = (reason: SkipReason, detail: string): SkipPlan => ({
    kind: 'skip',
    agent_id: row.id,
    agent_name: row.name,
    reason,
    detail,
    unmatched: reading.unmatched,
  });

  const legacy = row.attachments.filter((a) => a.origin === 'legacy');
  if (options.scope === 'bulk') {
    const others = row.attachments.filter((a) => a.origin !== 'legacy');
    if (others.length > 0) {
      return skip(
        'operator_attachments',
        `holds grants the migration did not make: ${others.map((a) => `${a.toolkit_name} [${a.origin}]`).join(', ')}`,
      );
    }
    const edited = legacy.filter((a) => a.rule_count > 0 || a.allow_proactive);
    if (edited.length > 0) {
      return skip(
        'edited_legacy_grant',
        `an operator added gate rules or scheduled runs to its legacy grant: ${edited.map((a) => a.toolkit_name).join(', ')}`,
      );
    }
    const drifted = legacy.filter((a) => !isSoundLegacyToolkit(a));
    if (drifted.length > 0) {
      return skip(
        'edited_legacy_toolkit',
        `the members of its legacy toolkit were edited: ${drifted.map((a) => a.toolkit_name).join(', ')}`,
      );
    }
  }

  // An admin's earlier choice to map typos stands until the string changes: a plain run that
  // finds the agent holding the mapped reading of its current string keeps it.
  const mappedKey = legacyToolSetKey(mapped);
  const keepsMapping = mappedKey !== legacyToolSetKey(exact) && legacy.some((a) => a.legacy_tool_set === mappedKey);
  const target = options.mapTypos || keepsMapping ? mapped : exact;
  const targetKey = legacyToolSetKey(target);
  const exactIds = new Set(exact);

  let toolkitId: number | null = null;
  if (target.length > 0) {
    const toolkit = options.toolkits.get(targetKey);
    if (toolkit && !isSoundLegacyToolkit(toolkit)) {
      return skip(
        'edited_legacy_toolkit',
        `the toolkit for ${targetKey} (#${toolkit.id} ${toolkit.name}) has had its members edited, so it no longer stands for that set`,
      );
    }
    toolkitId = toolkit?.id ?? null;
  }
  const holdsTarget = target.length > 0 && legacy.some((a) => a.legacy_tool_set === targetKey);
  return {
    kind: 'follow',
    agent_id: row.id,
    agent_name: row.name,
    tool_ids: target,
    mapped_ids: target.filter((id) => !exactIds.has(id)),
    unmatched: reading.unmatched,
    detach: legacy.filter((a) => target.length === 0 || a.legacy_tool_set !== targetKey).map((a) => a.attachment_id),
    attach: target.length > 0 && !holdsTarget,
    toolkit_id: toolkitId,
  };
}
