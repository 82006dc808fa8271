// The whole plan and its report for rows already in memory, for the tests: the migration runs the
// same two steps (planAgent, then ReportBuilder.addPlan) batch by batch, so that its memory does not
// grow with the table, and has no use for an all-at-once form.
import { planAgent, type AgentPlan, type LegacyAgentRow, type PlanOptions } from '../../../src/legacy/plan';
import { ReportBuilder, type MigrationReport, type ReportLimits } from '../../../src/legacy/report';

export function planEnabledTools(
  rows: readonly LegacyAgentRow[],
  options: Omit<PlanOptions, 'scope'>,
  limits?: Partial<ReportLimits>,
): { plans: AgentPlan[]; report: MigrationReport } {
  const plans = rows.map((row) => planAgent(row, { ...options, scope: 'bulk' }));
  const report = new ReportBuilder('dry_run', options.mapTypos, [...options.registeredIds].sort(), limits);
  for (const plan of plans) report.addPlan(plan);
  for (const toolkit of options.toolkits.values()) report.knowToolkit(toolkit.legacy_tool_set, toolkit.id, toolkit.name);
  return { plans, report: report.build() };
}
