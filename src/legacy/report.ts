// The enabled_tools migration's report: what was (or would be) granted to whom, the tokens that
// granted nothing, the agents left alone, and the verification. Built plan by plan with bounded
// lists, so a table of any size gives a report of bounded size; counts are always complete.
import { z } from 'zod';
import { legacyToolkitName, legacyToolSetKey } from '../core/legacy-enabled-tools';
import type { AgentPlan, FollowPlan, SkipReason } from './plan';

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

export interface ReportToolkit {
  tool_ids: string[];
  /** The toolkit's name; for one still to be made, the name it would get. */
  name: string;
  /** null while it does not exist yet (a dry run). */
  toolkit_id: number | null;
  /** `create`: a dry run would make it; `created`: this apply made it; `reuse`: it existed. */
  status: z.infer<typeof reportToolkitStatusSchema>;
  /** Agents whose grant is this toolkit after the run (changed or not). */
  agents: number;
  /** Why the name is not the plain one (an operator's toolkit holds it). */
  note?: string;
}

export interface UnmatchedEntry {
  agent_id: number;
  agent_name: string | null;
  token: string;
  suggestion: string | null;
  /** The suggestion was granted (map_typos now, or kept from an earlier mapped apply). */
  mapped: boolean;
}

export interface UnmatchedTokenSummary {
  token: string;
  suggestion: string | null;
  agents: number;
  mapped_for: number;
}

export interface SkippedEntry {
  agent_id: number;
  agent_name: string | null;
  reason: SkipReason;
  detail: string;
}

export interface ParityMismatch {
  agent_id: number;
  tool_id: string | null;
  legacy: boolean | null;
  new: boolean | null;
  problem: string;
}

export const verificationStatusSchema = z.enum(['passed', 'failed', 'not_run']);
export const verificationOverSchema = z.enum(['plan', 'database', 'none']);

export interface Verification {
  status: z.infer<typeof verificationStatusSchema>;
  /** `plan`: the grants a dry run would make; `database`: what the apply wrote, read back before commit. */
  over: z.infer<typeof verificationOverSchema>;
  agents_checked: number;
  tools: string[];
  runs: string[];
  /** Every mismatch found; `mismatches` keeps the first few. */
  mismatch_count: number;
  mismatches: ParityMismatch[];
}

export interface UndoSection {
  /** Legacy grants kept because an operator added gate rules or scheduled runs to them. */
  kept_attachments: { attachment_id: number; agent_id: number; toolkit_name: string }[];
  /**
   * Legacy toolkits kept: a grant that stays (an operator's, or a kept one) still uses them, or an
   * operator edited their members.
   */
  kept_toolkits: { toolkit_id: number; name: string; attachments: number; members_edited: boolean }[];
}

export interface MigrationReport {
  mode: MigrationMode;
  map_typos: boolean;
  /** True once an apply or undo committed; a dry run never does. */
  committed: boolean;
  tools: string[];
  agents: {
    read: number;
    /** Agents whose grant follows their string (the migration owns their access). */
    follow: number;
    /** Of those, how many the run changed (in a dry run: would change). */
    changed: number;
    unchanged: number;
    /** Of those, how many hold no tool (an empty, null or all-invalid string). */
    without_tools: number;
    skipped: number;
    with_unmatched_tokens: number;
    with_mapped_typos: number;
  };
  toolkits: ReportToolkit[];
  unmatched_tokens: UnmatchedTokenSummary[];
  unmatched: UnmatchedEntry[];
  skipped: SkippedEntry[];
  /** How many entries each bounded list left out. */
  left_out: { unmatched: number; unmatched_tokens: number; skipped: number };
  changes: { toolkits_created: number; toolkits_removed: number; attachments_created: number; attachments_removed: number };
  verification: Verification;
  undo?: UndoSection;
  duration_ms: number;
}

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
