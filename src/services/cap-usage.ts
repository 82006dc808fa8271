// Counting capped calls in PostgreSQL (SEMANTICS §13). A counter is one attachment's cap, for one
// tool (or all its members), for one agent or one sender: its key names all of that, and not the
// limit, so an operator who raises a limit keeps the count. A call is counted by one statement
// (toolgate_claim_caps) inside the statement that writes the call's `started` record
// (startToolCall), so the count and the record commit together; an uncapped call costs nothing here.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { CapCandidate } from '../core/compiled-policy';
import type { CapRule, DispatchKind } from '../core/types';

/** Whose calls a counter counts: the agent's, or one sender's (a scheduled run, or a run with no key, counts as one sender each). */
export interface CapScope {
  agent_id: number;
  run: DispatchKind;
  routing_key: string | null;
}

export function capKey(attachmentId: number, cap: CapRule, toolId: string, scope: CapScope): string {
  return `${attachmentId}|${counted(cap, toolId, scope)}`;
}

/** What a counter counts, whoever's cap it is: the tool (or `*`), per, window and whose calls. */
export function counted(cap: CapRule, toolId: string, scope: CapScope): string {
  const whose =
    cap.per === 'agent' ? `agent:${scope.agent_id}` : scope.run === 'scheduled' ? 'scheduled' : `sender:${scope.routing_key ?? ''}`;
  return `${cap.tool_id === null ? '*' : toolId}|${cap.per}|${cap.window_s}|${whose}`;
}

/** Drops the counters every call of which has left the window; how many went. */
export async function sweepCaps(sequelize: Sequelize): Promise<number> {
  const [row] = await sequelize.query<{ swept: number }>('SELECT toolgate_sweep_caps() AS swept', { type: QueryTypes.SELECT });
  return row?.swept ?? 0;
}

/** A call to count against caps: the attachments it may run through, the tool, and whose count it is. */
export interface CapClaim {
  candidates: readonly CapCandidate[];
  tool_id: string;
  scope: CapScope;
}

/** The claim as toolgate_claim_caps reads it: each candidate attachment with its counters' keys, limits and windows. */
export function claimArgument(claim: CapClaim): string {
  return JSON.stringify(
    claim.candidates.map((c) => ({
      attachment_id: c.attachment_id,
      caps: c.caps.map((cap) => ({
        key: capKey(c.attachment_id, cap, claim.tool_id, claim.scope),
        limit: cap.limit,
        window_s: cap.window_s,
      })),
    })),
  );
}

/** How many calls each cap has left in its window now, for the explanation. */
export async function capsRemaining(
  sequelize: Sequelize,
  attachmentId: number,
  caps: readonly CapRule[],
  scope: CapScope,
): Promise<number[]> {
  if (caps.length === 0) return [];
  // A cap on all members counts under '*'; one on a tool under the tool's id.
  const keys = caps.map((cap) => capKey(attachmentId, cap, cap.tool_id ?? '*', scope));
  const rows = await sequelize.query<{ cap_key: string; used: number }>(
    `SELECT u.cap_key, (SELECT count(*) FROM cap_hits h WHERE h.usage_id = u.id AND h.at > clock_timestamp() - u.window_s * interval '1 second') AS used
       FROM cap_usage u WHERE u.cap_key = ANY (ARRAY[:keys]::varchar[])`,
    { replacements: { keys }, type: QueryTypes.SELECT },
  );
  const used = new Map(rows.map((r) => [r.cap_key, Number(r.used)]));
  return caps.map((cap, i) => Math.max(0, cap.limit - (used.get(keys[i]!) ?? 0)));
}
