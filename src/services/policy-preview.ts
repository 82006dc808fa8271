// Previews of policy changes (SEMANTICS §15): reads, in one read-only snapshot, the policy of each
// agent the change reaches and the window's records of those agents alone, and replays them with
// the pure core (src/core/policy-preview.ts). The database counts what needs no order (the runs of
// each run group, its calls of each tool), and only the calls some cap counts are read one by one,
// in time order. Nothing is written and nothing is notified: the transaction is READ ONLY, so the
// database itself refuses a write.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { QueryTypes, Transaction, type Sequelize } from 'sequelize';
import { z } from 'zod';
import { windowSeconds } from '../core/cap-window';
import { closestToolId } from '../core/closest-tool';
import { applyChange, type AttachmentTerms, type PolicyChange } from '../core/policy-change';
import {
  PolicyPreview,
  type PolicyPair,
  type PreviewImpact,
  type RecordedCall,
  type RecordedCallGroup,
  type RecordedRunGroup,
} from '../core/policy-preview';
import { compilePolicy } from '../core/policy-index';
import type { ToolManifest } from '../core/tool-manifest';
import type { CapRule } from '../core/types';
import { orUnavailable } from '../db/unavailable';
import { ConflictError, NotFoundError, ValidationError, type ValidationIssue } from '../errors';
import { bodyId, rulesSchema, text } from '../http/fields';
import { checked, type Parsed } from '../http/parse';
import { approvalSchema, capsSchema } from './attachment-inputs';
import { loadAgentPolicy } from './policy-loader';

const MAX_WINDOW_S = 365 * 86_400;
const DEFAULT_WINDOW = '7d';
/** Rows read and replayed between two turns of the event loop: a long window never holds it for long. */
const PAGE = 5_000;
/** The memory each of a preview's hashes may take before it spills to disk (the server's default is 4MB). */
const WORK_MEM = '64MB';
/**
 * The most calls some cap counts that are read whole, at most ten pages held at once; the database
 * may plan parallel workers for such a read, which it plans for no cursor. More come through the cursor.
 */
const ORDERED_WHOLE = 10 * PAGE;
/** As many changed calls as the answer lists. */
const LISTED = 100;

const terms = {
  rules: rulesSchema.optional(),
  caps: capsSchema.optional(),
  approval: approvalSchema.optional(),
  allow_proactive: z.boolean().optional(),
};

const CHANGES = ['attach', 'update', 'detach', 'toolkit', 'access_rules'] as const;

export const previewInputSchema = z.strictObject({
  change: z
    .strictObject({
      attach: z.strictObject({ agent_id: bodyId, toolkit_id: bodyId, ...terms }).optional(),
      update: z.strictObject({ attachment_id: bodyId, ...terms }).optional(),
      detach: z.strictObject({ attachment_id: bodyId }).optional(),
      toolkit: z
        .strictObject({
          toolkit_id: bodyId,
          member_tool_ids: z.array(text(64).min(1)).max(500, 'at most 500 members'),
        })
        .optional(),
      access_rules: z.strictObject({ agent_id: bodyId, rules: rulesSchema }).optional(),
    })
    .refine((c) => CHANGES.filter((k) => c[k] !== undefined).length === 1, {
      message: 'a preview takes one change: give exactly one of attach, update, detach, toolkit or access_rules',
    }),
  window: z
    .string()
    .max(20)
    .refine((w) => {
      const s = windowSeconds(w);
      return s !== null && s <= MAX_WINDOW_S;
    }, 'a window is a whole number and a unit, s, m, h or d, such as 7d or 12h, of at most 365d')
    .optional(),
});
export type PreviewInput = z.input<typeof previewInputSchema>;
type ParsedInput = z.output<typeof previewInputSchema>;

type CallRow = Omit<RecordedCall, 'run_key'>;
/** A row of CALLS_SQL: a run group's calls of a tool come one way, and when the first came. */
type CallGroupRow = RecordedCallGroup & { first_at: number; first: string };

/** The window's records of the agents reached: the calls a replay reads, and a run's records. */
const CALLS_WHERE = `agent_id = ANY (ARRAY[:agents]::integer[]) AND created_at >= :from AND created_at <= :to
     AND tool_id IS NOT NULL AND run IN ('sender', 'scheduled')`;
const RUNS_WHERE = `agent_id = ANY (ARRAY[:agents]::integer[]) AND created_at >= :from AND created_at <= :to`;
/** A run group's routing key: a sender's, none for scheduled runs. */
const GROUP_KEY = `CASE WHEN run = 'sender' THEN routing_key END`;

/**
 * The calls of each run group, tool and way of coming: how many, and the first one's time. A plain
 * aggregate read whole, not through a cursor: its answer is bounded by the groups, not the calls,
 * and PostgreSQL plans parallel workers for it, which it plans for no cursor.
 */
const CALLS_SQL = `
  SELECT agent_id, run, ${GROUP_KEY} AS routing_key, tool_id, dispatch, count(*)::float8 AS calls,
         extract(epoch FROM min(created_at))::float8 * 1000 AS first_at, min(created_at)::text AS first
    FROM tool_calls WHERE ${CALLS_WHERE}
   GROUP BY agent_id, run, ${GROUP_KEY}, tool_id, dispatch`;
/**
 * The runs of each run group, read whole as CALLS_SQL is. A run is an agent run's record, or the
 * calls made under one run key, or a call with no key (each its own run); every record of a run
 * names its agent and routing key, so a run is in one group, and the groups' runs sum to the window's.
 */
const RUNS_SQL = `
  SELECT agent_id, run, routing_key, sum(records)::float8 AS runs
    FROM (SELECT agent_id, run, routing_key, CASE WHEN run_key IS NULL THEN count(*) ELSE 1 END AS records
            FROM (SELECT agent_id, run, ${GROUP_KEY} AS routing_key, run_key FROM tool_calls WHERE ${CALLS_WHERE}
                  UNION ALL
                  SELECT agent_id, run, ${GROUP_KEY}, run_key FROM agent_runs WHERE ${RUNS_WHERE}) AS records
           GROUP BY agent_id, run, routing_key, run_key) AS keys
   GROUP BY agent_id, run, routing_key`;
/**
 * A call's run group and tool as one text, matched against a list given inline: the database hashes
 * such a list, so each row of the window is one lookup, whatever the list's length.
 */
const TOOL_OF_GROUP = `(agent_id || '|' || run || '|' || coalesce(${GROUP_KEY}, '') || '|' || tool_id)`;
/**
 * The calls some cap counts, one by one in time order, as caps count them. Their tool and routing
 * key are tested first (columns, each a hashed lookup), so that the run group's key is built only
 * for the calls that may be counted.
 */
const ORDERED_CALLS_SQL = `
  SELECT id::float8 AS id, agent_id, tool_id, status, run, routing_key, extract(epoch FROM created_at)::float8 * 1000 AS at, dispatch
    FROM tool_calls
   WHERE ${CALLS_WHERE} AND tool_id = ANY (ARRAY[:tools]::text[]) AND coalesce(${GROUP_KEY}, '') = ANY (ARRAY[:senders]::text[])
     AND ${TOOL_OF_GROUP} = ANY (ARRAY[:keys]::text[])
   ORDER BY created_at, id`;
/** The first calls of the groups the change alters, up to the time by which at least the list's worth of them came. */
const EXAMPLES_SQL = `
  SELECT id::float8 AS id, agent_id, tool_id, status, run, routing_key, extract(epoch FROM created_at)::float8 * 1000 AS at, dispatch
    FROM tool_calls
   WHERE agent_id = ANY (ARRAY[:agents]::integer[]) AND created_at >= :from AND created_at <= CAST(:until AS timestamptz)
     AND tool_id IS NOT NULL AND run IN ('sender', 'scheduled') AND (${TOOL_OF_GROUP} || '|' || dispatch) = ANY (ARRAY[:keys]::text[])
   ORDER BY created_at, id
   LIMIT ${LISTED}`;

export class PolicyPreviewService {
  /** `withheld`: the tools dispatch refuses whatever a policy grants (held MCP tools), read at each preview. */
  constructor(
    private readonly sequelize: Sequelize,
    private readonly manifest: ToolManifest,
    private readonly withheld?: ReadonlySet<string>,
  ) {}

  /** What the change would do to the window's recorded traffic; nothing is written. */
  async preview(given: PreviewInput | Parsed<typeof previewInputSchema>): Promise<PreviewImpact> {
    const input = checked(previewInputSchema, given);
    const to = new Date();
    const from = new Date(to.getTime() - windowSeconds(input.window ?? DEFAULT_WINDOW)! * 1000);
    return orUnavailable(
      this.sequelize.transaction({ readOnly: true, isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ }, async (transaction) => {
        const change = await this.changeOf(input.change, transaction);
        const policies = await this.policiesOf(change, transaction);
        // A copy: a tool held or accepted while the rows are read does not change the preview halfway.
        const replay = new PolicyPreview(policies, this.withheld ? new Set(this.withheld) : undefined);
        const agents = [...policies.keys()];
        if (agents.length > 0) await this.replay(replay, { agents, from, to }, transaction);
        return replay.impact({ from, to });
      }),
    );
  }

  /**
   * The window's records replayed: the runs and the calls counted by the database per group, each
   * group decided once; the calls some cap counts read in time order; then the first calls of the
   * groups the change alters, for the list.
   */
  private async replay(replay: PolicyPreview, window: { agents: number[]; from: Date; to: Date }, transaction: Transaction): Promise<void> {
    const { agents, from, to } = window;
    // Room to hash a window's run keys in memory rather than spill them to disk; this transaction's alone.
    await this.sequelize.query(`SET LOCAL work_mem = '${WORK_MEM}'`, { transaction });
    const replacements = { agents, from, to };
    const changed: CallGroupRow[] = [];
    const ordered = new Map<string, CallGroupRow>();
    let orderedCalls = 0;
    // The planner guesses a few hundred runs where a week has hundreds of thousands, and would sort
    // them to sum them per group; hashing them is what it would do if it knew. For these statements alone.
    await this.sequelize.query('SET LOCAL enable_sort = off', { transaction });
    const runGroups = await this.whole<RecordedRunGroup>(RUNS_SQL, replacements, transaction);
    let runs = 0;
    await inPages(runGroups, (row) => {
      replay.addRunGroup(row);
      runs += row.runs;
    });
    const callGroups = await this.whole<CallGroupRow>(CALLS_SQL, replacements, transaction);
    await this.sequelize.query('SET LOCAL enable_sort = on', { transaction });
    await inPages(callGroups, (row) => {
      const outcome = replay.addCallGroup(row);
      if (outcome === 'changed') changed.push(row);
      else if (outcome === 'ordered') {
        ordered.set(toolOfGroup(row), row);
        orderedCalls += row.calls;
      }
    });
    replay.countRuns(runs);
    if (ordered.size > 0) {
      const groups = [...ordered.values()];
      const given = {
        ...replacements,
        tools: [...new Set(groups.map((g) => g.tool_id))],
        senders: [...new Set(groups.map((g) => g.routing_key ?? ''))],
        keys: [...ordered.keys()],
      };
      const each = (c: CallRow) => replay.replayCall(c);
      if (orderedCalls <= ORDERED_WHOLE) await inPages(await this.whole<CallRow>(ORDERED_CALLS_SQL, given, transaction), each);
      else await this.page<CallRow>(ORDERED_CALLS_SQL, given, transaction, each);
    }
    if (changed.length === 0) return;
    // The list's first calls all came by the time the list's worth of changed groups had had their first.
    changed.sort((a, b) => a.first_at - b.first_at);
    const until = changed[Math.min(LISTED, changed.length) - 1]!;
    const first = changed.filter((g) => g.first_at <= until.first_at);
    const keys = first.map((g) => `${toolOfGroup(g)}|${g.dispatch}`);
    const rows = await this.sequelize.query<CallRow>(EXAMPLES_SQL, {
      replacements: { agents, from, until: changed.length < LISTED ? to.toISOString() : until.first, keys },
      type: QueryTypes.SELECT,
      transaction,
      raw: true,
    });
    for (const row of rows) replay.addChangedExample(row);
  }

  /** A query's whole answer, for one bounded by the window's groups rather than its calls. */
  private whole<R extends object>(sql: string, replacements: Record<string, unknown>, transaction: Transaction): Promise<R[]> {
    return this.sequelize.query<R>(sql, { replacements, type: QueryTypes.SELECT, transaction, raw: true });
  }

  /**
   * The rows of a query read a page at a time through a cursor of the snapshot, each page replayed
   * before the next is read: a window of any size holds the event loop for a page at most, and
   * memory for a page.
   */
  private async page<R extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction: Transaction,
    each: (row: R) => void,
  ): Promise<void> {
    await this.sequelize.query(`DECLARE toolgate_preview NO SCROLL CURSOR FOR ${sql}`, { replacements, transaction });
    for (;;) {
      const rows = await this.sequelize.query<R>(`FETCH ${PAGE} FROM toolgate_preview`, {
        type: QueryTypes.SELECT,
        transaction,
        raw: true,
      });
      for (const row of rows) each(row);
      if (rows.length < PAGE) break;
      await nextTurn();
    }
    await this.sequelize.query('CLOSE toolgate_preview', { transaction });
  }

  /** The change as plain data, checked as making it for real would check it: what it names exists, and may be done. */
  private async changeOf(change: ParsedInput['change'], transaction: Transaction): Promise<PolicyChange> {
    if (change.attach) {
      const { agent_id, toolkit_id } = change.attach;
      await this.agentExists(agent_id, transaction);
      const [toolkit] = await this.sequelize.query<{ name: string; member_tool_ids: string[]; attached: boolean }>(
        `SELECT t.name, t.member_tool_ids,
                EXISTS (SELECT 1 FROM agent_toolkits at WHERE at.agent_id = :agent_id AND at.toolkit_id = t.id) AS attached
           FROM toolkits t WHERE t.id = :toolkit_id`,
        { replacements: { agent_id, toolkit_id }, type: QueryTypes.SELECT, transaction },
      );
      if (!toolkit) throw new NotFoundError(`Toolkit ${toolkit_id}`, 'name a toolkit that exists in change.attach.toolkit_id');
      if (toolkit.attached) {
        throw new ConflictError(
          `Toolkit ${toolkit_id} is already attached to agent ${agent_id}: preview a change of that attachment (update) instead.`,
        );
      }
      return {
        kind: 'attach',
        agent_id,
        toolkit: { toolkit_id, toolkit_name: toolkit.name, member_tool_ids: toolkit.member_tool_ids },
        terms: this.termsOf(change.attach, 'attach'),
      };
    }
    if (change.update) {
      const agentId = await this.attachmentAgent(change.update.attachment_id, 'update', transaction);
      return {
        kind: 'update',
        agent_id: agentId,
        attachment_id: change.update.attachment_id,
        terms: this.termsOf(change.update, 'update'),
      };
    }
    if (change.detach) {
      const agentId = await this.attachmentAgent(change.detach.attachment_id, 'detach', transaction);
      return { kind: 'detach', agent_id: agentId, attachment_id: change.detach.attachment_id };
    }
    if (change.toolkit) {
      const { toolkit_id, member_tool_ids } = change.toolkit;
      const [toolkit] = await this.sequelize.query<{ member_tool_ids: string[]; system_key: string | null }>(
        'SELECT member_tool_ids, system_key FROM toolkits WHERE id = :toolkit_id',
        { replacements: { toolkit_id }, type: QueryTypes.SELECT, transaction },
      );
      if (!toolkit) throw new NotFoundError(`Toolkit ${toolkit_id}`, 'name a toolkit that exists in change.toolkit.toolkit_id');
      if (toolkit.system_key === 'all_tools') {
        throw new ConflictError('All Tools mirrors the tool manifest and is rewritten on every sync: its members cannot be changed.');
      }
      return { kind: 'toolkit', toolkit_id, member_tool_ids: this.checkedMembers(member_tool_ids, toolkit.member_tool_ids) };
    }
    const access = change.access_rules!;
    await this.agentExists(access.agent_id, transaction);
    return { kind: 'access_rules', agent_id: access.agent_id, rules: access.rules.map((r) => ({ id: null, ...r })) };
  }

  /** Each agent the change reaches, with its policy compiled as it stands and as the change would make it. */
  private async policiesOf(change: PolicyChange, transaction: Transaction): Promise<Map<number, PolicyPair>> {
    const agents =
      change.kind === 'toolkit'
        ? (
            await this.sequelize.query<{ agent_id: number }>(
              'SELECT DISTINCT agent_id FROM agent_toolkits WHERE toolkit_id = :toolkit_id ORDER BY agent_id',
              { replacements: { toolkit_id: change.toolkit_id }, type: QueryTypes.SELECT, transaction },
            )
          ).map((r) => r.agent_id)
        : [change.agent_id];
    const live = this.manifest.ids;
    const policies = new Map<number, PolicyPair>();
    for (const agentId of agents) {
      const loaded = await loadAgentPolicy(this.sequelize, agentId, transaction);
      if (loaded === null) continue;
      policies.set(agentId, {
        current: compilePolicy(loaded.policy, live),
        candidate: compilePolicy(applyChange(loaded.policy, change), live),
      });
    }
    return policies;
  }

  private termsOf(
    given: {
      rules?: { kind: 'allow' | 'deny'; pattern: string }[];
      caps?: CapRule[];
      approval?: { approvers: string[] } | null;
      allow_proactive?: boolean;
    },
    at: 'attach' | 'update',
  ): AttachmentTerms {
    return {
      ...(given.rules !== undefined ? { rules: given.rules.map((r) => ({ id: null, ...r })) } : {}),
      ...(given.caps !== undefined ? { caps: this.checkedCaps(given.caps, at) } : {}),
      ...(given.approval !== undefined ? { approvers: given.approval?.approvers ?? null } : {}),
      ...(given.allow_proactive !== undefined ? { allow_proactive: given.allow_proactive } : {}),
    };
  }

  /** As attaching checks them: registered tools only, and no two caps counting the same calls over the same window. */
  private checkedCaps(caps: CapRule[], at: 'attach' | 'update'): CapRule[] {
    const seen = new Set<string>();
    const issues: ValidationIssue[] = [];
    caps.forEach((cap, index) => {
      const loc = ['change', at, 'caps', index];
      const counts = `${cap.tool_id ?? '*'}|${cap.per}|${cap.window_s}`;
      if (seen.has(counts)) {
        issues.push({
          loc,
          msg: `an earlier cap already counts ${cap.tool_id ?? "all the toolkit's members"} per ${cap.per} over this window: keep one, with the limit you mean`,
          type: 'duplicate_cap',
        });
      }
      seen.add(counts);
      if (cap.tool_id !== null && !this.manifest.get(cap.tool_id)) {
        issues.push({
          loc: [...loc, 'tool_id'],
          msg: `no tool is registered as ${cap.tool_id}${hint(cap.tool_id, this.manifest)}`,
          type: 'unknown_tool',
        });
      }
    });
    if (issues.length > 0) throw new ValidationError(issues, false);
    return caps;
  }

  /** As a toolkit's edit checks them: new members are registered tools; members it holds may stay, even stale. */
  private checkedMembers(requested: string[], current: readonly string[]): string[] {
    const kept = new Set(current);
    const issues: ValidationIssue[] = [];
    requested.forEach((id, index) => {
      if (this.manifest.has(id) || kept.has(id)) return;
      issues.push({
        loc: ['change', 'toolkit', 'member_tool_ids', index],
        msg: `${JSON.stringify(id)} is not a registered tool${hint(id, this.manifest)}; GET /api/tools lists the registered ids`,
        type: 'unknown_tool',
      });
    });
    if (issues.length > 0) throw new ValidationError(issues, false);
    return [...new Set(requested)];
  }

  private async attachmentAgent(attachmentId: number, at: 'update' | 'detach', transaction: Transaction): Promise<number> {
    const [row] = await this.sequelize.query<{ agent_id: number }>('SELECT agent_id FROM agent_toolkits WHERE id = :attachmentId', {
      replacements: { attachmentId },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!row) throw new NotFoundError(`Attachment ${attachmentId}`, `name an attachment that exists in change.${at}.attachment_id`);
    return row.agent_id;
  }

  private async agentExists(agentId: number, transaction: Transaction): Promise<void> {
    const rows = await this.sequelize.query('SELECT 1 FROM agents WHERE id = :agentId', {
      replacements: { agentId },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (rows.length === 0) throw new NotFoundError(`Agent ${agentId}`, 'name an agent that exists in the change');
  }
}

/** Rows already read, handled a page at a time, the event loop's turn between two pages. */
async function inPages<R>(rows: readonly R[], each: (row: R) => void): Promise<void> {
  for (let i = 0; i < rows.length; i += PAGE) {
    if (i > 0) await nextTurn();
    for (const row of rows.slice(i, i + PAGE)) each(row);
  }
}

/** A run group's tool as TOOL_OF_GROUP writes it. */
function toolOfGroup(g: Pick<RecordedCallGroup, 'agent_id' | 'run' | 'routing_key' | 'tool_id'>): string {
  return `${g.agent_id}|${g.run}|${g.routing_key ?? ''}|${g.tool_id}`;
}

function hint(id: string, manifest: ToolManifest): string {
  const guess = closestToolId(id, [...manifest.ids]);
  return guess ? ` (did you mean ${guess}?)` : '';
}
