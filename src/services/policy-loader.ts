// Reads one agent's access rules, attachments, gate rules and toolkits in a single query and returns
// the plain data the core resolves over, with the little of the agent a run needs besides (its name
// and prompt, for the model).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { StoredCandidate } from '../../models/agent-toolkit';
import type { AgentPolicyData, AttachmentPolicy, CandidateTerms, CapRule, RuleKind } from '../core/types';

/** What a run knows of its agent besides the policy. */
export interface RunAgent {
  id: number;
  name: string;
  system_prompt: string | null;
  /** Who the agent copies when it passes on a request it cannot decide (SEMANTICS §11). */
  escalation_address: string | null;
}

export interface LoadedPolicy {
  agent: RunAgent;
  policy: AgentPolicyData;
  /** The agent's policy version as of the same snapshot (its own version plus the policy epoch). */
  version: number | null;
}

interface PolicyRow {
  agent_id: number;
  agent_name: string;
  agent_system_prompt: string | null;
  agent_escalation_address: string | null;
  policy_version: string | null;
  access_rules: { id: number; kind: RuleKind; pattern: string }[];
  attachment_id: number | null;
  allow_proactive: boolean | null;
  approvers: string[] | null;
  caps: CapRule[] | null;
  candidate: StoredCandidate | null;
  candidate_stamp: string | null;
  toolkit_id: number | null;
  toolkit_name: string | null;
  member_tool_ids: string[] | null;
  rule_id: number | null;
  rule_kind: RuleKind | null;
  rule_pattern: string | null;
}

// The version and the access rules are the agent's, not a row's: read once, in a materialized CTE.
// As subqueries in the select list (or in a lateral join, which the planner pulls up into it) they
// would run again for every attachment × rule row.
const POLICY_SQL = `
  WITH p AS MATERIALIZED (
    SELECT toolgate_policy_version(:agentId) AS policy_version,
           (SELECT coalesce(json_agg(json_build_object('id', ar.id, 'kind', ar.kind, 'pattern', ar.pattern) ORDER BY ar.id), '[]')
              FROM agent_access_rules ar WHERE ar.agent_id = :agentId) AS access_rules
  )
  SELECT a.id AS agent_id, a.name AS agent_name, a.system_prompt AS agent_system_prompt, a.escalation_address AS agent_escalation_address,
         p.policy_version, p.access_rules,
         at.id AS attachment_id, at.allow_proactive, at.approvers, at.caps, at.candidate,
         to_char(at.candidate_at AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS') AS candidate_stamp,
         t.id AS toolkit_id, t.name AS toolkit_name, t.member_tool_ids,
         r.id AS rule_id, r.kind AS rule_kind, r.pattern AS rule_pattern
    FROM agents a
    CROSS JOIN p
    LEFT JOIN agent_toolkits at ON at.agent_id = a.id
    LEFT JOIN toolkits t ON t.id = at.toolkit_id
    LEFT JOIN agent_toolkit_rules r ON r.agent_toolkit_id = at.id
   WHERE a.id = :agentId
   ORDER BY at.id, r.id`;

/** The agent's policy, or null when there is no such agent; in `transaction`, as that transaction sees it. */
export async function loadAgentPolicy(sequelize: Sequelize, agentId: number, transaction?: Transaction): Promise<LoadedPolicy | null> {
  const rows = await sequelize.query<PolicyRow>(POLICY_SQL, { replacements: { agentId }, type: QueryTypes.SELECT, transaction });
  if (rows.length === 0) return null;
  return {
    agent: {
      id: agentId,
      name: rows[0].agent_name,
      system_prompt: rows[0].agent_system_prompt,
      escalation_address: rows[0].agent_escalation_address,
    },
    policy: policyFromRows(agentId, rows),
    version: versionOf(rows[0].policy_version),
  };
}

const VERSION_SQL = 'SELECT toolgate_policy_version(:agentId) AS version';

/**
 * The agent's policy version (two indexed reads and the one-row epoch): raised in the same
 * transaction as every change to what its policy reads. Null when there is no such agent.
 */
export async function loadPolicyVersion(sequelize: Sequelize, agentId: number): Promise<number | null> {
  const rows = await sequelize.query<{ version: string }>(VERSION_SQL, { replacements: { agentId }, type: QueryTypes.SELECT });
  return versionOf(rows[0]?.version ?? null);
}

// bigint comes back as text; a version stays far below 2^53.
function versionOf(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

function policyFromRows(agentId: number, rows: PolicyRow[]): AgentPolicyData {
  const byId = new Map<number, AttachmentPolicy & { rules: AttachmentPolicy['rules'][number][] }>();
  for (const row of rows) {
    if (row.attachment_id === null || row.toolkit_id === null) continue;
    let attachment = byId.get(row.attachment_id);
    if (!attachment) {
      attachment = {
        attachment_id: row.attachment_id,
        toolkit_id: row.toolkit_id,
        toolkit_name: row.toolkit_name ?? '',
        allow_proactive: row.allow_proactive === true,
        member_tool_ids: row.member_tool_ids ?? [],
        rules: [],
        approvers: row.approvers,
        caps: (row.caps ?? []).map(capOf),
        ...(row.candidate === null ? {} : { candidate: candidateOf(row.candidate, row.candidate_stamp) }),
      };
      byId.set(row.attachment_id, attachment);
    }
    if (row.rule_id !== null && row.rule_kind !== null && row.rule_pattern !== null) {
      attachment.rules.push({ id: row.rule_id, kind: row.rule_kind, pattern: row.rule_pattern });
    }
  }
  return { agent_id: agentId, access_rules: rows[0]?.access_rules ?? [], attachments: [...byId.values()] };
}

// jsonb keeps keys in its own order: written back in the API's.
function capOf(cap: CapRule): CapRule {
  return { tool_id: cap.tool_id, per: cap.per, limit: cap.limit, window_s: cap.window_s };
}

function candidateOf(stored: StoredCandidate, stamp: string | null): CandidateTerms {
  return {
    ...(stamp !== null ? { stamp } : {}),
    ...(stored.rules !== undefined ? { rules: stored.rules.map((r) => ({ id: null, kind: r.kind, pattern: r.pattern })) } : {}),
    ...(stored.caps !== undefined ? { caps: stored.caps.map(capOf) } : {}),
    ...(stored.approvers !== undefined ? { approvers: stored.approvers } : {}),
    ...(stored.allow_proactive !== undefined ? { allow_proactive: stored.allow_proactive === true } : {}),
  };
}
