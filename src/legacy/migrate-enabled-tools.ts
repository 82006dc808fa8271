// The enabled_tools migration over the database: a dry run (read-only, changing nothing) or an apply
// (one transaction: plan and write batch by batch, then read everything back and check parity
// before commit, rolling back on any mismatch). Both are the planner in plan.ts, run per batch.
import { Transaction, type Sequelize } from 'sequelize';
import { legacyToolkitName, legacyToolSetKey } from '../core/legacy-enabled-tools';
import type { ToolManifest } from '../core/tool-manifest';
import type { AgentPolicyData } from '../core/types';
import { BATCH_WORK_SETTINGS, setLocal } from '../db/transaction-settings';
import { countAgents, hasToolgateTables, readAgentBatch, readLegacyToolkits, type StoredAgentRow } from './agent-rows';
import { MigrationBusyError, ParityMismatchError, SchemaNotMigratedError } from './errors';
import { chooseLegacyToolkitName, ensureLegacyToolkit, writePlans } from './legacy-toolkits';
import { checkParity, PARITY_RUNS } from './parity';
import { planAgents, type FollowPlan, type LegacyToolkitRow, type PlanOptions } from './plan';
import { ReportBuilder, type MigrationReport, type ParityMismatch, type ReportLimits, type Verification } from './report';

export interface MigrationProgress {
  phase: 'plan' | 'verify';
  done: number;
  total: number;
}

export interface EnabledToolsMigrationOptions {
  /** `dry_run` changes nothing; `apply` commits only when every check passes. */
  mode: 'dry_run' | 'apply';
  /** Grant the suggestion of each mistyped token (the report lists them either way). Default false. */
  mapTypos?: boolean;
  /** Agents read per query. Default 2000. */
  batchSize?: number;
  limits?: Partial<ReportLimits>;
  /** How long an apply waits for other writers to finish with the tables. Default 30 s. */
  lockTimeoutSeconds?: number;
  onProgress?: (progress: MigrationProgress) => void;
}

const DEFAULT_BATCH = 2000;
const MISMATCHES_KEPT = 50;

/**
 * Migrates every agent's `enabled_tools` string to legacy toolkit grants, or previews it.
 *
 * @example
 * const preview = await migrateEnabledTools(sequelize, manifest, { mode: 'dry_run' });
 * const done = await migrateEnabledTools(sequelize, manifest, { mode: 'apply' });
 */
export async function migrateEnabledTools(sequelize: Sequelize, manifest: ToolManifest, options: EnabledToolsMigrationOptions): Promise<MigrationReport> {
  const started = performance.now();
  const mapTypos = options.mapTypos ?? false;
  const tools = manifest.list().map((t) => t.id).sort();
  const report = new ReportBuilder(options.mode, mapTypos, tools, options.limits);
  const run = options.mode === 'apply' ? apply : dryRun;
  await run(sequelize, manifest, report, { ...options, mapTypos, batchSize: options.batchSize ?? DEFAULT_BATCH });
  return report.build({ committed: options.mode === 'apply', duration_ms: Math.round(performance.now() - started) });
}

type Resolved = EnabledToolsMigrationOptions & { mapTypos: boolean; batchSize: number };

async function dryRun(sequelize: Sequelize, manifest: ToolManifest, report: ReportBuilder, options: Resolved): Promise<void> {
  // One snapshot, and PostgreSQL itself refuses any write: a dry run cannot change anything.
  await sequelize.transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ }, async (transaction) => {
    await sequelize.query('SET TRANSACTION READ ONLY', { transaction });
    await setLocal(sequelize, transaction, BATCH_WORK_SETTINGS);
    const migrated = await hasToolgateTables(sequelize, transaction);
    const toolkits = migrated ? await readLegacyToolkits(sequelize, transaction) : new Map<string, LegacyToolkitRow>();
    const planOptions: PlanOptions = { registeredIds: manifest.ids, mapTypos: options.mapTypos, toolkits, scope: 'bulk' };
    const total = await countAgents(sequelize, transaction);
    const verification = startVerification('plan', [...manifest.ids].sort());
    await eachBatch(sequelize, { ...options, withAttachments: migrated, transaction, total, phase: 'plan' }, (rows) => {
      planAgents(rows, planOptions).forEach((plan, i) => {
        report.addPlan(plan);
        if (plan.kind === 'follow') verifyPlanned(plan, rows[i]!, manifest, verification);
      });
    });
    for (const toolkit of toolkits.values()) report.knowToolkit(toolkit.legacy_tool_set, toolkit.id, toolkit.name, 'reuse');
    for (const toolSet of report.setsWithoutToolkit()) {
      const ids = toolSet.split(',');
      const chosen = migrated ? await chooseLegacyToolkitName(sequelize, ids, transaction) : { name: legacyToolkitName(ids) };
      report.knowToolkit(toolSet, null, chosen.name, 'create', chosen.note);
    }
    report.verified(finish(verification));
  });
}

async function apply(sequelize: Sequelize, manifest: ToolManifest, report: ReportBuilder, options: Resolved): Promise<void> {
  const lockTimeout = options.lockTimeoutSeconds ?? 30;
  try {
    await sequelize.transaction(async (transaction) => {
      await setLocal(sequelize, transaction, BATCH_WORK_SETTINGS);
      if (!(await hasToolgateTables(sequelize, transaction))) throw new SchemaNotMigratedError();
      await lockForMigration(sequelize, transaction, lockTimeout);
      const toolkits = await readLegacyToolkits(sequelize, transaction);
      const created = new Set<string>();
      // The agents the apply leaves alone: the check must find exactly these skipped again, and
      // no other (a grant meddled with after the planner wrote it would read as "edited").
      const skipped = new Set<number>();
      const planOptions: PlanOptions = { registeredIds: manifest.ids, mapTypos: options.mapTypos, toolkits, scope: 'bulk' };
      const total = await countAgents(sequelize, transaction);

      await eachBatch(sequelize, { ...options, withAttachments: true, transaction, total, phase: 'plan' }, async (rows) => {
        const plans = planAgents(rows, planOptions);
        for (const plan of plans) {
          report.addPlan(plan);
          if (plan.kind === 'skip') skipped.add(plan.agent_id);
          if (plan.kind !== 'follow' || !plan.attach || plan.toolkit_id !== null) continue;
          const toolSet = legacyToolSetKey(plan.tool_ids);
          if (toolkits.has(toolSet)) continue;
          const made = await ensureLegacyToolkit(sequelize, plan.tool_ids, transaction);
          toolkits.set(toolSet, made);
          if (made.created) {
            created.add(toolSet);
            report.count({ toolkits_created: 1 });
            report.knowToolkit(toolSet, made.id, made.name, 'created', made.note);
          }
        }
        report.count(await writePlans(sequelize, plans, idsBySet(toolkits), transaction));
      });
      for (const [toolSet, toolkit] of toolkits) {
        if (!created.has(toolSet)) report.knowToolkit(toolSet, toolkit.id, toolkit.name, 'reuse');
      }

      const snapshot = report.build();
      const verification = await verifyDatabase(sequelize, manifest, { ...options, transaction, total, planned: snapshot, skipped });
      report.verified(verification);
      if (verification.status !== 'passed') throw new ParityMismatchError(report.build());
    });
  } catch (err) {
    if ((err as { parent?: { code?: string } }).parent?.code === '55P03') throw new MigrationBusyError(lockTimeout);
    throw err;
  }
}

/**
 * Writers to agents, toolkits and attachments (the legacy application's included) wait until the
 * apply commits, so what is verified is what commits. Readers do not wait: runs resolve and record
 * their tool calls throughout.
 */
async function lockForMigration(sequelize: Sequelize, transaction: Transaction, seconds: number): Promise<void> {
  await sequelize.query(`SET LOCAL lock_timeout = '${Math.max(1, Math.round(seconds))}s'`, { transaction });
  await sequelize.query('LOCK TABLE agents, toolkits, agent_toolkits, agent_toolkit_rules IN SHARE ROW EXCLUSIVE MODE', { transaction });
}

/**
 * Reads every agent back, inside the apply's transaction, and checks three things: the planner has
 * nothing left to do (a second apply would change nothing); for every agent it owns, the legacy
 * answer equals the new one for every registered tool; and only the agents the run meant to map
 * typos for hold mapped grants.
 */
async function verifyDatabase(
  sequelize: Sequelize,
  manifest: ToolManifest,
  opts: Resolved & { transaction: Transaction; total: number; planned: MigrationReport; skipped: ReadonlySet<number> },
): Promise<Verification> {
  const verification = startVerification('database', [...manifest.ids].sort());
  const toolkits = await readLegacyToolkits(sequelize, opts.transaction);
  const planOptions: PlanOptions = { registeredIds: manifest.ids, mapTypos: opts.mapTypos, toolkits, scope: 'bulk' };
  let read = 0;
  let mapped = 0;
  await eachBatch(sequelize, { ...opts, withAttachments: true, phase: 'verify' }, (rows) => {
    read += rows.length;
    const plans = planAgents(rows, planOptions);
    plans.forEach((plan, i) => {
      const row = rows[i]!;
      const leftAlone = opts.skipped.has(plan.agent_id);
      if (plan.kind === 'skip' && leftAlone) return;
      const problem = (text: string) => mismatch(verification, { agent_id: plan.agent_id, tool_id: null, legacy: null, new: null, problem: text });
      if (plan.kind === 'skip') {
        problem(`the grant written for this agent no longer follows its string: ${plan.detail}`);
      } else {
        if (leftAlone) problem('this agent was skipped, yet its grants changed during the apply');
        if (plan.attach || plan.detach.length > 0) problem('the planner would still change this agent after the apply');
        if (plan.mapped_ids.length > 0) mapped += 1;
      }
      // Parity is checked on the agent's grants as stored, whatever the planner makes of them.
      verification.agents_checked += 1;
      const mappedIds = plan.kind === 'follow' ? plan.mapped_ids : [];
      for (const m of checkParity({ agent_id: row.id, enabled_tools: row.enabled_tools, policy: policyOf(row), mapped_ids: mappedIds }, manifest.ids, verification.tools)) {
        mismatch(verification, m);
      }
    });
  });
  if (read !== opts.planned.agents.read) {
    mismatch(verification, { agent_id: 0, tool_id: null, legacy: null, new: null, problem: `${opts.planned.agents.read} agents were planned but ${read} read back` });
  }
  if (mapped !== opts.planned.agents.with_mapped_typos) {
    mismatch(verification, {
      agent_id: 0,
      tool_id: null,
      legacy: null,
      new: null,
      problem: `${mapped} agents hold mapped typos but the plan mapped ${opts.planned.agents.with_mapped_typos}`,
    });
  }
  return finish(verification);
}

/** The dry run's check: the grant the plan would make, against the legacy answer. */
function verifyPlanned(plan: FollowPlan, row: StoredAgentRow, manifest: ToolManifest, verification: Verification): void {
  const policy: AgentPolicyData = {
    agent_id: plan.agent_id,
    attachments:
      plan.tool_ids.length === 0
        ? []
        : [{ attachment_id: 0, toolkit_id: plan.toolkit_id ?? 0, toolkit_name: legacyToolkitName(plan.tool_ids), allow_proactive: false, member_tool_ids: plan.tool_ids, rules: [] }],
  };
  verification.agents_checked += 1;
  for (const m of checkParity({ agent_id: plan.agent_id, enabled_tools: row.enabled_tools, policy, mapped_ids: plan.mapped_ids }, manifest.ids, verification.tools)) {
    mismatch(verification, m);
  }
}

function policyOf(row: StoredAgentRow): AgentPolicyData {
  return {
    agent_id: row.id,
    attachments: row.attachments.map((a) => ({
      attachment_id: a.attachment_id,
      toolkit_id: a.toolkit_id,
      toolkit_name: a.toolkit_name,
      allow_proactive: a.allow_proactive,
      member_tool_ids: a.member_tool_ids,
      rules: a.rules,
    })),
  };
}

async function eachBatch(
  sequelize: Sequelize,
  opts: Resolved & { withAttachments: boolean; transaction: Transaction; total: number; phase: MigrationProgress['phase'] },
  fn: (rows: StoredAgentRow[]) => void | Promise<void>,
): Promise<void> {
  let after: number | null = null;
  let done = 0;
  opts.onProgress?.({ phase: opts.phase, done, total: opts.total });
  for (;;) {
    const rows = await readAgentBatch(sequelize, { after, limit: opts.batchSize, withAttachments: opts.withAttachments, transaction: opts.transaction });
    if (rows.length === 0) break;
    await fn(rows);
    after = rows[rows.length - 1]!.id;
    done += rows.length;
    opts.onProgress?.({ phase: opts.phase, done, total: Math.max(done, opts.total) });
  }
}

function startVerification(over: Verification['over'], tools: string[]): Verification {
  return { status: 'not_run', over, agents_checked: 0, tools, runs: PARITY_RUNS, mismatch_count: 0, mismatches: [] };
}

function mismatch(verification: Verification, m: ParityMismatch): void {
  verification.mismatch_count += 1;
  if (verification.mismatches.length < MISMATCHES_KEPT) verification.mismatches.push(m);
}

function finish(verification: Verification): Verification {
  return { ...verification, status: verification.mismatch_count > 0 ? 'failed' : 'passed' };
}

function idsBySet(toolkits: ReadonlyMap<string, LegacyToolkitRow>): Map<string, number> {
  return new Map([...toolkits].map(([toolSet, t]) => [toolSet, t.id]));
}

