// The enabled_tools migration's report: what was (or would be) granted to whom, the tokens that
// granted nothing, the agents left alone, and the verification. Built plan by plan with bounded
// lists, so a table of any size gives a report of bounded size; counts are always complete.
import { z } from 'zod';
import { legacyToolkitName, legacyToolSetKey } from '../core/legacy-enabled-tools';
import { skipReasonSchema, type AgentPlan, type FollowPlan } from './plan';

export const migrationModeSchema = z.enum(['dry_run', 'apply', 'undo']);
export type MigrationMode = z.infer<typeof migrationModeSchema>;

export interface ReportLimits {
  /** Entries kept in the per-agent lists (unmatched tokens, skipped agents). */
  agents_listed: number;
  /** Distinct tokens kept in the by-token summary. */
  tokens_listed: number;
  /** Characters kept of one token (a legacy string can hold anything). */
  token_chars: number;
}

export const DEFAULT_REPORT_LIMITS: ReportLimits = { agents_listed: 1000, tokens_listed: 500, token_chars: 120 };

export const reportToolkitStatusSchema = z.enum(['create', 'created', 'reuse']);

const reportToolkitSchema = z.object({
  tool_ids: z.array(z.string()),
  /** The toolkit's name; for one still to be made, the name it would get. */
  name: z.string(),
  /** null while it does not exist yet (a dry run). */
  toolkit_id: z.number().int().nullable(),
  /** `create`: a dry run would make it; `created`: this apply made it; `reuse`: it existed. */
  status: reportToolkitStatusSchema,
  /** Agents whose grant is this toolkit after the run (changed or not). */
  agents: z.number().int(),
  /** Why the name is not the plain one (an operator's toolkit holds it). */
  note: z.string().optional(),
});
export type ReportToolkit = z.output<typeof reportToolkitSchema>;

const unmatchedEntrySchema = z.object({
  agent_id: z.number().int(),
  agent_name: z.string().nullable(),
  token: z.string(),
  suggestion: z.string().nullable(),
  /** The suggestion was granted (map_typos now, or kept from an earlier mapped apply). */
  mapped: z.boolean(),
});
export type UnmatchedEntry = z.output<typeof unmatchedEntrySchema>;

const unmatchedTokenSummarySchema = z.object({
  token: z.string(),
  suggestion: z.string().nullable(),
  agents: z.number().int(),
  mapped_for: z.number().int(),
});
export type UnmatchedTokenSummary = z.output<typeof unmatchedTokenSummarySchema>;

const skippedEntrySchema = z.object({
  agent_id: z.number().int(),
  agent_name: z.string().nullable(),
  reason: skipReasonSchema,
  detail: z.string(),
});
export type SkippedEntry = z.output<typeof skippedEntrySchema>;

const parityMismatchSchema = z.object({
  agent_id: z.number().int(),
  tool_id: z.string().nullable(),
  legacy: z.boolean().nullable(),
  new: z.boolean().nullable(),
  problem: z.string(),
});
export type ParityMismatch = z.output<typeof parityMismatchSchema>;

export const verificationStatusSchema = z.enum(['passed', 'failed', 'not_run']);
export const verificationOverSchema = z.enum(['plan', 'database', 'none']);

const verificationSchema = z.object({
  status: verificationStatusSchema,
  /** `plan`: the grants a dry run would make; `database`: what the apply wrote, read back before commit. */
  over: verificationOverSchema,
  agents_checked: z.number().int(),
  tools: z.array(z.string()),
  runs: z.array(z.string()),
  /** Every mismatch found; `mismatches` keeps the first few. */
  mismatch_count: z.number().int(),
  mismatches: z.array(parityMismatchSchema),
});
export type Verification = z.output<typeof verificationSchema>;

const undoSectionSchema = z.object({
  /** Legacy grants kept because an operator added gate rules or scheduled runs to them. */
  kept_attachments: z.array(z.object({ attachment_id: z.number().int(), agent_id: z.number().int(), toolkit_name: z.string() })),
  /**
   * Legacy toolkits kept: a grant that stays (an operator's, or a kept one) still uses them, or an
   * operator edited their members.
   */
  kept_toolkits: z.array(
    z.object({ toolkit_id: z.number().int(), name: z.string(), attachments: z.number().int(), members_edited: z.boolean() }),
  ),
});
export type UndoSection = z.output<typeof undoSectionSchema>;

export const migrationReportSchema = z.object({
  mode: migrationModeSchema,
  map_typos: z.boolean(),
  /** True once an apply or undo committed; a dry run never does. */
  committed: z.boolean(),
  tools: z.array(z.string()),
  agents: z.object({
    read: z.number().int(),
    /** Agents whose grant follows their string (the migration owns their access). */
    follow: z.number().int(),
    /** Of those, how many the run changed (in a dry run: would change). */
    changed: z.number().int(),
    unchanged: z.number().int(),
    /** Of those, how many hold no tool (an empty, null or all-invalid string). */
    without_tools: z.number().int(),
    skipped: z.number().int(),
    with_unmatched_tokens: z.number().int(),
    with_mapped_typos: z.number().int(),
  }),
  toolkits: z.array(reportToolkitSchema),
  unmatched_tokens: z.array(unmatchedTokenSummarySchema),
  unmatched: z.array(unmatchedEntrySchema),
  skipped: z.array(skippedEntrySchema),
  /** How many entries each bounded list left out. */
  left_out: z.object({ unmatched: z.number().int(), unmatched_tokens: z.number().int(), skipped: z.number().int() }),
  changes: z.object({
    toolkits_created: z.number().int(),
    toolkits_removed: z.number().int(),
    attachments_created: z.number().int(),
    attachments_removed: z.number().int(),
  }),
  verification: verificationSchema,
  undo: undoSectionSchema.optional(),
  duration_ms: z.number().int(),
});
export type MigrationReport = z.output<typeof migrationReportSchema>;

export class ReportBuilder {
  readonly #report: MigrationReport;
  readonly #limits: ReportLimits;
  readonly #toolkits = new Map<string, ReportToolkit>();
  readonly #tokens = new Map<string, UnmatchedTokenSummary>();

  constructor(mode: MigrationMode, mapTypos: boolean, tools: string[], limits: Partial<ReportLimits> = {}) {
    this.#limits = { ...DEFAULT_REPORT_LIMITS, ...limits };
    this.#report = {
      mode,
      map_typos: mapTypos,
      committed: false,
      tools,
      agents: {
        read: 0,
        follow: 0,
        changed: 0,
        unchanged: 0,
        without_tools: 0,
        skipped: 0,
        with_unmatched_tokens: 0,
        with_mapped_typos: 0,
      },
      toolkits: [],
      unmatched_tokens: [],
      unmatched: [],
      skipped: [],
      left_out: { unmatched: 0, unmatched_tokens: 0, skipped: 0 },
      changes: { toolkits_created: 0, toolkits_removed: 0, attachments_created: 0, attachments_removed: 0 },
      verification: { status: 'not_run', over: 'none', agents_checked: 0, tools: [], runs: [], mismatch_count: 0, mismatches: [] },
      duration_ms: 0,
    };
  }

  get mode(): MigrationMode {
    return this.#report.mode;
  }

  addPlan(plan: AgentPlan): void {
    const agents = this.#report.agents;
    agents.read += 1;
    if (plan.unmatched.length > 0) agents.with_unmatched_tokens += 1;
    const mappedIds = new Set(plan.kind === 'follow' ? plan.mapped_ids : []);
    for (const u of plan.unmatched) {
      const mapped = u.suggestion !== null && mappedIds.has(u.suggestion);
      this.#addToken(u.token, u.suggestion, mapped);
      this.#list(this.#report.unmatched, 'unmatched', {
        agent_id: plan.agent_id,
        agent_name: plan.agent_name,
        token: this.#clip(u.token),
        suggestion: u.suggestion,
        mapped,
      });
    }
    if (plan.kind === 'skip') {
      agents.skipped += 1;
      this.#list(this.#report.skipped, 'skipped', {
        agent_id: plan.agent_id,
        agent_name: plan.agent_name,
        reason: plan.reason,
        detail: plan.detail,
      });
      return;
    }
    agents.follow += 1;
    if (plan.attach || plan.detach.length > 0) agents.changed += 1;
    else agents.unchanged += 1;
    if (plan.tool_ids.length === 0) agents.without_tools += 1;
    if (plan.mapped_ids.length > 0) agents.with_mapped_typos += 1;
    if (plan.tool_ids.length > 0) this.#toolkitFor(plan.tool_ids).agents += 1;
  }

  /** Records the toolkit that stands (or will stand) for a set. */
  /**
   * `agents` agents of one class that share `plan` and have no line of their own in the report (the
   * plan follows the string and leaves no token unmatched): counted as `addPlan` would count each.
   */
  addClass(plan: FollowPlan, agents: number): void {
    if (plan.unmatched.length > 0) throw new Error('A class with unmatched tokens lists its agents: add them one by one.');
    const counts = this.#report.agents;
    counts.read += agents;
    counts.follow += agents;
    if (plan.attach || plan.detach.length > 0) counts.changed += agents;
    else counts.unchanged += agents;
    if (plan.tool_ids.length === 0) counts.without_tools += agents;
    if (plan.mapped_ids.length > 0) counts.with_mapped_typos += agents;
    if (plan.tool_ids.length > 0) this.#toolkitFor(plan.tool_ids).agents += agents;
  }

  knowToolkit(toolSet: string, toolkitId: number | null, name: string, status?: ReportToolkit['status'], note?: string): void {
    const entry = this.#toolkits.get(toolSet);
    if (!entry) return;
    entry.toolkit_id = toolkitId;
    entry.name = name;
    entry.status = status ?? (toolkitId === null ? 'create' : 'reuse');
    if (note) entry.note = note;
  }

  /** Sets that agents need and that no toolkit stands for yet. */
  setsWithoutToolkit(): string[] {
    return [...this.#toolkits.entries()].filter(([, t]) => t.toolkit_id === null).map(([key]) => key);
  }

  count(changes: Partial<MigrationReport['changes']>): void {
    const c = this.#report.changes;
    for (const [key, value] of Object.entries(changes) as [keyof MigrationReport['changes'], number][]) c[key] += value;
  }

  verified(verification: Verification): void {
    this.#report.verification = verification;
  }

  undo(section: UndoSection): void {
    this.#report.undo = section;
  }

  build(extra: { committed?: boolean; duration_ms?: number } = {}): MigrationReport {
    const toolkits = [...this.#toolkits.values()].sort((a, b) => b.agents - a.agents || a.name.localeCompare(b.name));
    const tokens = [...this.#tokens.values()].sort((a, b) => b.agents - a.agents || a.token.localeCompare(b.token));
    return structuredClone({
      ...this.#report,
      committed: extra.committed ?? this.#report.committed,
      duration_ms: extra.duration_ms ?? this.#report.duration_ms,
      toolkits,
      unmatched_tokens: tokens,
    });
  }

  #toolkitFor(toolIds: string[]): ReportToolkit {
    const key = legacyToolSetKey(toolIds);
    let entry = this.#toolkits.get(key);
    if (!entry) {
      entry = { tool_ids: [...toolIds], name: legacyToolkitName(toolIds), toolkit_id: null, status: 'create', agents: 0 };
      this.#toolkits.set(key, entry);
    }
    return entry;
  }

  #addToken(token: string, suggestion: string | null, mapped: boolean): void {
    // Keyed by the whole token: two long tokens that differ only past the clip stay apart.
    let entry = this.#tokens.get(token);
    if (!entry) {
      if (this.#tokens.size >= this.#limits.tokens_listed) {
        this.#report.left_out.unmatched_tokens += 1;
        return;
      }
      entry = { token: this.#clip(token), suggestion, agents: 0, mapped_for: 0 };
      this.#tokens.set(token, entry);
    }
    entry.agents += 1;
    if (mapped) entry.mapped_for += 1;
  }

  #list<T>(list: T[], name: 'unmatched' | 'skipped', entry: T): void {
    if (list.length < this.#limits.agents_listed) list.push(entry);
    else this.#report.left_out[name] += 1;
  }

  #clip(token: string): string {
    const max = this.#limits.token_chars;
    return token.length <= max ? token : `${token.slice(0, max)}… (${token.length} characters)`;
  }
}
