// The enabled_tools migration over the database: a dry run (read-only, changing nothing) or an apply
// (one transaction: plan and write, then check everything against the strings before commit,
// rolling back on any mismatch). Both are the planner in plan.ts. Agents that share a string and
// hold nothing but (at most) one clean legacy grant share one plan and one parity check.
import { Transaction, type Sequelize } from 'sequelize';
import { legacyToolkitName, legacyToolSetKey } from '../core/legacy-enabled-tools';
import type { ToolManifest } from '../core/tool-manifest';
import type { AgentPolicyData } from '../core/types';
import { BATCH_WORK_SETTINGS, setLocal } from '../db/transaction-settings';
import {
  countAgents,
  hasToolgateTables,
  readLegacyToolkits,
  readPlainClasses,
  readToolkitsById,
  streamAgents,
  type AgentStreamOptions,
  type PlainClass,
  type StoredAgentRow,
  type StoredAttachmentRow,
  type StreamedAgentRow,
} from './agent-rows';
import { MigrationBusyError, ParityMismatchError, SchemaNotMigratedError } from '../errors';
import { chooseLegacyToolkitName, ensureLegacyToolkit, writeClassPlans, writePlans, type ClassWrite } from './legacy-toolkits';
import { checkParity, PARITY_RUNS } from './parity';
import { planAgent, planChanges, type AgentPlan, type FollowPlan, type LegacyToolkitRow, type PlanOptions } from './plan';
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
  /** Agents fetched at a time from the run's cursor. Default 10,000. */
  batchSize?: number;
  limits?: Partial<ReportLimits>;
  /** How long an apply waits for other writers to finish with the tables. Default 30 s. */
  lockTimeoutSeconds?: number;
  onProgress?: (progress: MigrationProgress) => void;
}

const DEFAULT_BATCH = 10_000;
const MISMATCHES_KEPT = 50;
// Plans written per statement: few statements (each fires the policy-version triggers once), and a
// bounded list in memory.
const WRITE_CHUNK = 20_000;
// Distinct (string, legacy grant) classes planned once each. Real tables hold a few dozen; past this
// many the run plans and checks agent by agent instead, as it always could.
export const MAX_PLAIN_CLASSES = 10_000;

/**
 * Migrates every agent's `enabled_tools` string to legacy toolkit grants, or previews it.
 *
 * @example
 * const preview = await migrateEnabledTools(sequelize, manifest, { mode: 'dry_run' });
 * const done = await migrateEnabledTools(sequelize, manifest, { mode: 'apply' });
 */
export async function migrateEnabledTools(
  sequelize: Sequelize,
  manifest: ToolManifest,
  options: EnabledToolsMigrationOptions,
): Promise<MigrationReport> {
  const started = performance.now();
  const mapTypos = options.mapTypos ?? false;
  const tools = manifest
    .list()
    .map((t) => t.id)
    .sort();
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
    const planner = new ClassPlanner(sequelize, planOptions, transaction);
    // Whether the grant planned for a class passes parity: checked once per class, not per agent.
    const classParity = new Map<string, boolean>();
    await eachChunk(sequelize, { ...options, withAttachments: migrated, transaction, total, phase: 'plan' }, async (rows) => {
      for (const row of rows) {
        const { plan, key } = await planner.plan(row);
        report.addPlan(plan);
        if (plan.kind !== 'follow') continue;
        if (key !== null && classParity.get(key) === true) {
          verification.agents_checked += 1;
          continue;
        }
        const before = verification.mismatch_count;
        verifyPlanned(plan, row, manifest, verification);
        if (key !== null && classParity.size < MAX_PLAIN_CLASSES) classParity.set(key, verification.mismatch_count === before);
      }
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
      // Plain agents by class, from one aggregate: a class whose plan follows the string and leaves no
      // token unmatched gives the report no line per agent, so its agents are counted, not read. Only
      // the agents that are not plain, and those of the other classes, are read one by one. The
      // aggregate counts every agent too.
      const grouped = await readPlainClasses(sequelize, MAX_PLAIN_CLASSES, transaction);
      const total =
        grouped === null ? await countAgents(sequelize, transaction) : grouped.classes.reduce((n, c) => n + c.agents, grouped.notPlain);

      const planner = new ClassPlanner(sequelize, planOptions, transaction);
      const pending: AgentPlan[] = [];
      // Changing classes of plain agents, by key: written at the end, a whole class per row.
      const classWrites = new Map<string, FollowPlan & { from: number | null; enabled_tools: string | null; agents: number }>();
      const flush = async () => {
        if (pending.length === 0) return;
        report.count(await writePlans(sequelize, pending, idsBySet(toolkits), transaction));
        pending.length = 0;
      };
      const makeToolkit = async (toolIds: string[]) => {
        const toolSet = legacyToolSetKey(toolIds);
        if (toolkits.has(toolSet)) return;
        const made = await ensureLegacyToolkit(sequelize, toolIds, transaction);
        toolkits.set(toolSet, made);
        if (made.created) {
          created.add(toolSet);
          report.count({ toolkits_created: 1 });
          report.knowToolkit(toolSet, made.id, made.name, 'created', made.note);
        }
      };

      const counted = grouped === null ? null : await planCountedClasses(sequelize, grouped.classes, planOptions, transaction);
      // The toolkits the counted classes need, made in the order of each set's first agent, as the
      // agent-by-agent run makes them: a toolkit's id does not depend on how its agents were read.
      const needs = counted?.needs ?? [];
      const makeNeededBefore = async (agentId: number) => {
        while (needs.length > 0 && needs[0]!.first_id < agentId) await makeToolkit(needs.shift()!.tool_ids);
      };
      for (const c of counted?.classes ?? []) {
        report.addClass(c.plan, c.agents);
        if (planChanges(c.plan))
          classWrites.set(c.key, { ...c.plan, from: c.toolkit_id, enabled_tools: c.enabled_tools, agents: c.agents });
      }
      await eachChunk(
        sequelize,
        {
          ...options,
          withAttachments: true,
          onlyNotPlainAnd: counted?.listed,
          done: counted?.agents ?? 0,
          transaction,
          total,
          phase: 'plan',
        },
        async (rows) => {
          for (const row of rows) {
            await makeNeededBefore(row.id);
            const { plan, key, byClass } = await planner.plan(row);
            report.addPlan(plan);
            if (plan.kind === 'skip') skipped.add(plan.agent_id);
            if (planChanges(plan) && plan.kind === 'follow') {
              if (!byClass) pending.push(plan);
              else {
                const known = classWrites.get(key!);
                if (known) known.agents += 1;
                else classWrites.set(key!, { ...plan, from: row.grant?.toolkit_id ?? null, enabled_tools: row.enabled_tools, agents: 1 });
              }
            }
            if (plan.kind === 'follow' && plan.attach && plan.toolkit_id === null) await makeToolkit(plan.tool_ids);
          }
          if (pending.length >= WRITE_CHUNK) await flush();
        },
      );
      await makeNeededBefore(Number.POSITIVE_INFINITY);
      await flush();
      const ids = idsBySet(toolkits);
      const writes: ClassWrite[] = [];
      // What the class writes must change, counted from the plan: a write that reached other agents is found here.
      const expected = { attachments_created: 0, attachments_removed: 0 };
      for (const c of classWrites.values()) {
        const kit = c.attach ? (c.toolkit_id ?? ids.get(legacyToolSetKey(c.tool_ids))) : null;
        if (kit === undefined) throw new Error(`No toolkit for the legacy set ${legacyToolSetKey(c.tool_ids)}.`);
        writes.push({ enabled_tools: c.enabled_tools, toolkit_id: c.from, detach: c.detach.length > 0, attach_toolkit_id: kit });
        if (kit !== null) expected.attachments_created += c.agents;
        if (c.detach.length > 0) expected.attachments_removed += c.agents;
      }
      const wrote = await writeClassPlans(sequelize, writes, transaction);
      report.count(wrote);
      const writeProblem =
        wrote.attachments_created !== expected.attachments_created || wrote.attachments_removed !== expected.attachments_removed
          ? `the class writes made ${wrote.attachments_created} grants and removed ${wrote.attachments_removed}, where the plan counted ${expected.attachments_created} and ${expected.attachments_removed}`
          : null;
      for (const [toolSet, toolkit] of toolkits) {
        if (!created.has(toolSet)) report.knowToolkit(toolSet, toolkit.id, toolkit.name, 'reuse');
      }

      const snapshot = report.build();
      const c = snapshot.changes;
      // Nothing written, and other writers locked out since the aggregate: the classes are as read.
      const unchanged = c.toolkits_created + c.attachments_created + c.attachments_removed === 0 ? grouped : null;
      let verification = await verifyDatabase(sequelize, manifest, {
        ...options,
        transaction,
        total,
        planned: snapshot,
        skipped,
        unchanged,
      });
      if (writeProblem !== null) {
        mismatch(verification, { agent_id: 0, tool_id: null, legacy: null, new: null, problem: writeProblem });
        verification = finish(verification);
      }
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
 * Checks, inside the apply's transaction, what it leaves: the planner has nothing left to do (a
 * second apply would change nothing); for every agent it owns, the legacy answer equals the new
 * one for every registered tool; only the agents the run left alone read as skipped; and only the
 * agents the run meant to map typos for hold mapped grants.
 *
 * Plain agents are checked by class, by the database: it groups them by string and grant, and each
 * class is planned and checked once, for all its agents. Every other agent is read and checked one
 * by one. Should any of that find a problem, the whole check runs again agent by agent, so that the
 * report names the agents exactly as a check of every agent in id order would.
 */
async function verifyDatabase(sequelize: Sequelize, manifest: ToolManifest, opts: VerifyOptions): Promise<Verification> {
  const toolkits = await readLegacyToolkits(sequelize, opts.transaction);
  const planOptions: PlanOptions = { registeredIds: manifest.ids, mapTypos: opts.mapTypos, toolkits, scope: 'bulk' };
  const byClass = await verifyByClass(sequelize, manifest, planOptions, opts);
  return byClass ?? verifyEveryAgent(sequelize, manifest, planOptions, opts);
}

type VerifyOptions = Resolved & {
  transaction: Transaction;
  total: number;
  planned: MigrationReport;
  skipped: ReadonlySet<number>;
  /** The classes as the apply read them, when it wrote nothing since: not read again. */
  unchanged?: Awaited<ReturnType<typeof readPlainClasses>>;
};

/** The check by class; null when anything is amiss (or there are too many classes), for the agent-by-agent check to say what. */
async function verifyByClass(
  sequelize: Sequelize,
  manifest: ToolManifest,
  planOptions: PlanOptions,
  opts: VerifyOptions,
): Promise<Verification | null> {
  const verification = startVerification('database', [...manifest.ids].sort());
  opts.onProgress?.({ phase: 'verify', done: 0, total: opts.total });
  const grouped = opts.unchanged ?? (await readPlainClasses(sequelize, MAX_PLAIN_CLASSES, opts.transaction));
  if (grouped === null) return null;
  const { classes, notPlain } = grouped;
  const kits = await readToolkitsById(
    sequelize,
    [...new Set(classes.flatMap((c) => (c.toolkit_id === null ? [] : [c.toolkit_id])))],
    opts.transaction,
  );
  let read = 0;
  let mapped = 0;
  const oneByOne: typeof classes = [];
  for (const c of classes) {
    const kit = c.toolkit_id === null ? null : kits.get(c.toolkit_id);
    if (kit === undefined) return null;
    const attachments: StoredAttachmentRow[] = kit === null ? [] : [plainAttachment(0, c.toolkit_id!, kit)];
    const row: StoredAgentRow = { id: 0, name: null, enabled_tools: c.enabled_tools, attachments };
    const plan = planAgent(row, planOptions);
    if (plan.kind === 'skip') {
      // Whether each of these agents was left alone by the apply is a question per agent.
      oneByOne.push(c);
      continue;
    }
    if (planChanges(plan)) return null;
    if (
      checkParity(
        { agent_id: 0, enabled_tools: c.enabled_tools, policy: policyOf(row), mapped_ids: plan.mapped_ids },
        manifest.ids,
        verification.tools,
      ).length > 0
    )
      return null;
    read += c.agents;
    verification.agents_checked += c.agents;
    if (plan.mapped_ids.length > 0) mapped += c.agents;
  }
  opts.onProgress?.({ phase: 'verify', done: read, total: Math.max(read, opts.total) });

  // Agents that are not plain, and plain ones whose class the planner skips: one by one.
  let readSkipped = 0;
  let amiss = false;
  if (notPlain > 0 || oneByOne.length > 0)
    await streamAgents(
      sequelize,
      { withAttachments: true, onlyNotPlainAnd: oneByOne, chunk: opts.batchSize, transaction: opts.transaction },
      (rows) => {
        for (const streamed of rows) {
          const row = storedRow(streamed, kits);
          if (row === null) {
            amiss = true;
            return;
          }
          read += 1;
          const before = verification.mismatch_count;
          const plan = checkOneAgent(row, planOptions, manifest, opts.skipped, verification);
          if (plan.kind === 'skip' && opts.skipped.has(plan.agent_id)) readSkipped += 1;
          if (plan.kind === 'follow' && plan.mapped_ids.length > 0) mapped += 1;
          if (verification.mismatch_count > before) amiss = true;
        }
        opts.onProgress?.({ phase: 'verify', done: read, total: Math.max(read, opts.total) });
      },
    );
  // Every agent that reads as skipped was left alone (checked above), and as many read so as were
  // left alone: so no agent left alone reads as followed.
  if (amiss || readSkipped !== opts.skipped.size) return null;
  if (read !== opts.planned.agents.read || mapped !== opts.planned.agents.with_mapped_typos) return null;
  return finish(verification);
}

/** The check agent by agent, every agent read in full, in id order. */
async function verifyEveryAgent(
  sequelize: Sequelize,
  manifest: ToolManifest,
  planOptions: PlanOptions,
  opts: VerifyOptions,
): Promise<Verification> {
  const verification = startVerification('database', [...manifest.ids].sort());
  let read = 0;
  let mapped = 0;
  await eachChunk(sequelize, { ...opts, withAttachments: true, everyAgentInFull: true, phase: 'verify' }, (rows) => {
    for (const streamed of rows) {
      read += 1;
      const plan = checkOneAgent(
        { ...streamed, attachments: streamed.attachments ?? [] },
        planOptions,
        manifest,
        opts.skipped,
        verification,
      );
      if (plan.kind === 'follow' && plan.mapped_ids.length > 0) mapped += 1;
    }
  });
  if (read !== opts.planned.agents.read) {
    mismatch(verification, {
      agent_id: 0,
      tool_id: null,
      legacy: null,
      new: null,
      problem: `${opts.planned.agents.read} agents were planned but ${read} read back`,
    });
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

/** One agent's check, as stored: its plan, and parity on the grants it holds. Returns the plan. */
function checkOneAgent(
  row: StoredAgentRow,
  planOptions: PlanOptions,
  manifest: ToolManifest,
  skipped: ReadonlySet<number>,
  verification: Verification,
): AgentPlan {
  const plan = planAgent(row, planOptions);
  const leftAlone = skipped.has(plan.agent_id);
  if (plan.kind === 'skip' && leftAlone) return plan;
  const problem = (text: string) =>
    mismatch(verification, { agent_id: plan.agent_id, tool_id: null, legacy: null, new: null, problem: text });
  if (plan.kind === 'skip') {
    problem(`the grant written for this agent no longer follows its string: ${plan.detail}`);
  } else {
    if (leftAlone) problem('this agent was skipped, yet its grants changed during the apply');
    if (plan.attach || plan.detach.length > 0) problem('the planner would still change this agent after the apply');
  }
  // Parity is checked on the agent's grants as stored, whatever the planner makes of them.
  verification.agents_checked += 1;
  const mappedIds = plan.kind === 'follow' ? plan.mapped_ids : [];
  for (const m of checkParity(
    { agent_id: row.id, enabled_tools: row.enabled_tools, policy: policyOf(row), mapped_ids: mappedIds },
    manifest.ids,
    verification.tools,
  )) {
    mismatch(verification, m);
  }
  return plan;
}

/** The dry run's check: the grant the plan would make, against the legacy answer. */
function verifyPlanned(
  plan: FollowPlan,
  row: Pick<StoredAgentRow, 'enabled_tools'>,
  manifest: ToolManifest,
  verification: Verification,
): void {
  const policy: AgentPolicyData = {
    agent_id: plan.agent_id,
    attachments:
      plan.tool_ids.length === 0
        ? []
        : [
            {
              attachment_id: 0,
              toolkit_id: plan.toolkit_id ?? 0,
              toolkit_name: legacyToolkitName(plan.tool_ids),
              allow_proactive: false,
              member_tool_ids: plan.tool_ids,
              rules: [],
            },
          ],
  };
  verification.agents_checked += 1;
  for (const m of checkParity(
    { agent_id: plan.agent_id, enabled_tools: row.enabled_tools, policy, mapped_ids: plan.mapped_ids },
    manifest.ids,
    verification.tools,
  )) {
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

async function eachChunk(
  sequelize: Sequelize,
  opts: Resolved & {
    withAttachments: boolean;
    everyAgentInFull?: boolean;
    onlyNotPlainAnd?: AgentStreamOptions['onlyNotPlainAnd'];
    /** Agents already accounted for without being read. */
    done?: number;
    transaction: Transaction;
    total: number;
    phase: MigrationProgress['phase'];
  },
  fn: (rows: StreamedAgentRow[]) => void | Promise<void>,
): Promise<void> {
  let done = opts.done ?? 0;
  opts.onProgress?.({ phase: opts.phase, done, total: opts.total });
  await streamAgents(
    sequelize,
    {
      withAttachments: opts.withAttachments,
      everyAgentInFull: opts.everyAgentInFull,
      onlyNotPlainAnd: opts.onlyNotPlainAnd,
      chunk: opts.batchSize,
      transaction: opts.transaction,
    },
    async (rows) => {
      await fn(rows);
      done += rows.length;
      opts.onProgress?.({ phase: opts.phase, done, total: Math.max(done, opts.total) });
    },
  );
}

type KitRow = { name: string; legacy_tool_set: string | null; member_tool_ids: readonly string[] };

interface CountedClass extends PlainClass {
  key: string;
  plan: FollowPlan;
}

/**
 * Plans each class of plain agents once. Those whose plan follows the string with every token
 * matched are `classes` (counted, never read one by one); the others (a skip, or tokens the report
 * lists per agent) are `listed`, for their agents to be read. `needs`: the toolkits the counted
 * classes must have made, one per set, by the set's first agent.
 */
async function planCountedClasses(
  sequelize: Sequelize,
  all: readonly PlainClass[],
  planOptions: PlanOptions,
  transaction: Transaction,
): Promise<{ classes: CountedClass[]; listed: PlainClass[]; agents: number; needs: { first_id: number; tool_ids: string[] }[] }> {
  const kits = await readToolkitsById(
    sequelize,
    [...new Set(all.flatMap((c) => (c.toolkit_id === null ? [] : [c.toolkit_id])))],
    transaction,
  );
  const classes: CountedClass[] = [];
  const listed: PlainClass[] = [];
  const needs = new Map<string, { first_id: number; tool_ids: string[] }>();
  for (const c of all) {
    const kit = c.toolkit_id === null ? null : kits.get(c.toolkit_id);
    if (kit === undefined) throw new Error(`Toolkit ${c.toolkit_id} vanished during the migration.`);
    const row: StoredAgentRow = {
      id: 0,
      name: null,
      enabled_tools: c.enabled_tools,
      attachments: kit ? [plainAttachment(0, c.toolkit_id!, kit)] : [],
    };
    const plan = planAgent(row, planOptions);
    if (plan.kind === 'skip' || plan.unmatched.length > 0) {
      listed.push(c);
      continue;
    }
    classes.push({ ...c, key: classKey(c.toolkit_id, c.enabled_tools), plan });
    if (!plan.attach || plan.toolkit_id !== null) continue;
    const toolSet = legacyToolSetKey(plan.tool_ids);
    const known = needs.get(toolSet);
    if (!known || c.first_id < known.first_id) needs.set(toolSet, { first_id: c.first_id, tool_ids: plan.tool_ids });
  }
  return {
    classes,
    listed,
    agents: classes.reduce((n, c) => n + c.agents, 0),
    needs: [...needs.values()].sort((a, b) => a.first_id - b.first_id),
  };
}

/** A plain agent's class: the toolkit of its grant and its string, as ClassPlanner keys it. */
function classKey(toolkitId: number | null, enabledTools: string | null): string {
  return `${toolkitId ?? ''}|${enabledTools === null ? 'null' : `'${enabledTools}`}`;
}

function plainAttachment(attachmentId: number, toolkitId: number, kit: KitRow): StoredAttachmentRow {
  return {
    attachment_id: attachmentId,
    toolkit_id: toolkitId,
    toolkit_name: kit.name,
    origin: 'legacy',
    allow_proactive: false,
    rule_count: 0,
    legacy_tool_set: kit.legacy_tool_set,
    member_tool_ids: kit.member_tool_ids,
    rules: [],
  };
}

/** A streamed agent with its attachments spelled out; null when a plain agent's toolkit is unknown. */
function storedRow(row: StreamedAgentRow, kits: ReadonlyMap<number, KitRow>): StoredAgentRow | null {
  if (row.attachments !== null) return { ...row, attachments: row.attachments };
  if (row.grant === null) return { ...row, attachments: [] };
  const kit = kits.get(row.grant.toolkit_id);
  return kit ? { ...row, attachments: [plainAttachment(row.grant.attachment_id, row.grant.toolkit_id, kit)] } : null;
}

/**
 * The planner over streamed agents, once per class: a plain agent's plan depends only on its string
 * and the toolkit of its grant, so the first agent of a class is planned and the others take its
 * plan with their own id, name and attachment. Agents that are not plain are planned one by one.
 */
class ClassPlanner {
  readonly #plans = new Map<string, AgentPlan>();
  readonly #kits = new Map<number, KitRow>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly options: PlanOptions,
    private readonly transaction: Transaction,
  ) {}

  /**
   * The agent's plan; its class key (null when it is not plain); and whether its class's plan is
   * shared (every plain agent of that key gets it, the first one included).
   */
  async plan(streamed: StreamedAgentRow): Promise<{ plan: AgentPlan; key: string | null; byClass: boolean; row: StoredAgentRow }> {
    if (streamed.attachments !== null) {
      const row = { ...streamed, attachments: streamed.attachments };
      return { plan: planAgent(row, this.options), key: null, byClass: false, row };
    }
    const grant = streamed.grant;
    if (grant !== null && !this.#kits.has(grant.toolkit_id)) {
      for (const [id, kit] of await readToolkitsById(this.sequelize, [grant.toolkit_id], this.transaction)) this.#kits.set(id, kit);
    }
    const row = storedRow(streamed, this.#kits);
    if (row === null) throw new Error(`Toolkit ${grant?.toolkit_id} of agent ${streamed.id} vanished during the migration.`);
    const key = classKey(grant?.toolkit_id ?? null, streamed.enabled_tools);
    const template = this.#plans.get(key);
    if (template === undefined) {
      const plan = planAgent(row, this.options);
      const byClass = this.#plans.size < MAX_PLAIN_CLASSES;
      if (byClass) this.#plans.set(key, plan);
      return { plan, key, byClass, row };
    }
    const own = { agent_id: streamed.id, agent_name: streamed.name };
    if (template.kind === 'skip') return { plan: { ...template, ...own }, key, byClass: true, row };
    // A plain agent's only legacy attachment is the one the plan would detach, if any.
    const detach = template.detach.length > 0 && grant !== null ? [grant.attachment_id] : [];
    return { plan: { ...template, ...own, detach }, key, byClass: true, row };
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
