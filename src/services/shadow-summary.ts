// What an attachment's candidate terms would have decided so far (SEMANTICS §15), read from the
// shadow the runs and tool calls recorded since the candidate was set. A record's shadow holds one
// entry per attachment whose candidate decided otherwise: the first at its top, any others in `also`;
// only this attachment's entries count here.
import { QueryTypes, type Sequelize } from 'sequelize';
import { z } from 'zod';
import { verdictSchema, type Verdict } from '../core/shadow';
import { dispatchKindSchema } from '../core/types';
import { TOOL_CALL_STATUSES, type ToolCallStatus } from '../../models/tool-call';

/** Senders (or scheduled runs) whose runs the candidate would give tools, or take tools from. */
const shadowSendersSchema = z.object({
  routing_key: z.string().nullable(),
  run: dispatchKindSchema,
  tools: z.array(z.string()),
  runs: z.number().int(),
});
export type ShadowSenders = z.output<typeof shadowSendersSchema>;

/** One recorded call the candidate would have decided otherwise. */
const shadowCallSchema = z.object({
  call_id: z.number().int(),
  tool_id: z.string(),
  routing_key: z.string().nullable(),
  status: z.enum(TOOL_CALL_STATUSES),
  would_be: verdictSchema,
  reason: z.string(),
  at: z.string(),
});
export type ShadowCall = z.output<typeof shadowCallSchema>;

/** What a candidate would have decided so far, counted from when it was set. */
export const shadowSummarySchema = z.object({
  since: z.string(),
  runs: z.number().int().describe('agent runs (messages, scheduled runs) recorded since the candidate was set'),
  differing_runs: z.number().int().describe('of those, the runs whose offer the candidate would change'),
  gaining: z.array(shadowSendersSchema).describe('who would gain which tools, with their run counts (at most 100 entries)'),
  losing: z.array(shadowSendersSchema).describe('who would lose which tools (at most 100 entries)'),
  calls_changed: z.number().int().describe('tool-call records the candidate would have decided otherwise'),
  over_cap: z.number().int().describe('of those, the calls that ran which the candidate would refuse as over one of its caps'),
  calls: z.array(shadowCallSchema).describe('the latest 20 of them, newest first'),
});
export type ShadowSummary = z.output<typeof shadowSummarySchema>;

/** Lists hold at most this many entries; the counts count all. */
const LISTED = 100;
const CALLS_LISTED = 20;

// Each record's entries for this attachment: its top-level entry, and those in `also`.
const entries = (table: string) => `
  SELECT x.id, x.routing_key, x.run, x.created_at, e.entry
    FROM ${table} x
   CROSS JOIN LATERAL jsonb_array_elements(jsonb_build_array(x.shadow - 'also') || coalesce(x.shadow -> 'also', '[]'::jsonb)) AS e(entry)
   WHERE x.agent_id = :agentId AND x.created_at >= :since AND x.shadow IS NOT NULL
     AND e.entry ->> 'attachment_id' = :attachmentId`;

const SENDERS_SQL = (side: 'adds' | 'removes') => `
  WITH e AS (${entries('agent_runs')})
  SELECT e.routing_key, e.run, array_agg(DISTINCT t.tool ORDER BY t.tool) AS tools, count(DISTINCT e.id) AS runs
    FROM e CROSS JOIN LATERAL jsonb_array_elements_text(e.entry -> '${side}') AS t(tool)
   GROUP BY e.routing_key, e.run
   ORDER BY runs DESC, e.routing_key NULLS FIRST
   LIMIT ${LISTED}`;

export async function shadowSummary(sequelize: Sequelize, agentId: number, attachmentId: number, since: string): Promise<ShadowSummary> {
  const replacements = { agentId, attachmentId: String(attachmentId), since };
  const select = <T extends object>(sql: string) => sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
  const [counts] = await select<{ runs: string; differing_runs: string; calls_changed: string; over_cap: string }>(
    `WITH c AS (${entries('tool_calls')})
     SELECT (SELECT count(*) FROM agent_runs WHERE agent_id = :agentId AND created_at >= :since) AS runs,
            (SELECT count(DISTINCT id) FROM (${entries('agent_runs')}) r) AS differing_runs,
            (SELECT count(DISTINCT id) FROM c) AS calls_changed,
            (SELECT count(DISTINCT id) FROM c WHERE c.entry ->> 'reason' = 'cap_exceeded') AS over_cap`,
  );
  const senders = (rows: (Omit<ShadowSenders, 'runs'> & { runs: string })[]) => rows.map((r) => ({ ...r, runs: Number(r.runs) }));
  const gaining = senders(await select(SENDERS_SQL('adds')));
  const losing = senders(await select(SENDERS_SQL('removes')));
  const calls = await select<{
    id: string;
    tool_id: string;
    routing_key: string | null;
    status: ToolCallStatus;
    entry: { would_be: Verdict; reason: string };
    created_at: Date;
  }>(
    `SELECT c.id, c.tool_id, c.routing_key, c.status, e.entry, e.created_at
       FROM (${entries('tool_calls')}) e JOIN tool_calls c ON c.id = e.id
      ORDER BY c.id DESC LIMIT ${CALLS_LISTED}`,
  );
  return {
    since,
    runs: Number(counts?.runs ?? 0),
    differing_runs: Number(counts?.differing_runs ?? 0),
    gaining,
    losing,
    calls_changed: Number(counts?.calls_changed ?? 0),
    over_cap: Number(counts?.over_cap ?? 0),
    calls: calls.map((c) => ({
      call_id: Number(c.id),
      tool_id: c.tool_id,
      routing_key: c.routing_key,
      status: c.status,
      would_be: c.entry.would_be,
      reason: c.entry.reason,
      at: new Date(c.created_at).toISOString(),
    })),
  };
}
