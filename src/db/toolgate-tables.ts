// The tables toolgate's migrations make, each with the migration that makes it. Said once, so that
// the migrator can tell, before it changes anything, which of them a database already holds that
// toolgate did not make (a host's own `tasks`, say), and so that the README's list is held to it.
//
// Four of them are tables the legacy application had too: the migration that would create one
// adopts it in place when it exists (its columns kept, toolgate's added), but only when the
// operator asks for that (adoptLegacyTables). Any other name already taken stops the migration.

export interface ToolgateTable {
  name: string;
  /** The migration that creates (or adopts) it, without the file's extension. */
  migration: string;
  /** The legacy application had a table of this name, which toolgate may adopt in place. */
  adoptable: boolean;
}

const table = (name: string, migration: string, adoptable = false): ToolgateTable => ({ name, migration, adoptable });

export const TOOLGATE_TABLES: readonly ToolgateTable[] = [
  table('agents', '20261130000001-create-agents', true),
  table('toolkits', '20261130000002-create-toolkits'),
  table('agent_toolkits', '20261130000003-create-agent-toolkits'),
  table('agent_toolkit_rules', '20261130000004-create-agent-toolkit-rules'),
  table('tool_calls', '20261130000005-create-tool-calls', true),
  table('documents', '20261130000006-create-documents', true),
  table('document_chunks', '20261130000007-create-document-chunks'),
  table('tasks', '20261130000008-create-tasks', true),
  table('agent_access_rules', '20261130000010-create-agent-access-rules'),
  table('threads', '20261130000011-create-threads'),
  table('agent_runs', '20261130000012-create-agent-runs'),
  table('agent_policy_versions', '20261130000020-create-agent-policy-versions'),
  table('toolgate_rate_limits', '20261130000022-create-rate-limits'),
  table('admin_sessions', '20261130000030-create-admin-sessions'),
  table('admin_jobs', '20261130000031-create-admin-jobs'),
  table('thread_participants', '20261201000001-bind-threads-to-participants'),
  table('agent_message_ids', '20261201000001-bind-threads-to-participants'),
  table('approval_requests', '20261201000003-create-approval-requests'),
  table('toolgate_instances', '20261201000005-exactly-once'),
  table('idempotency_keys', '20261201000005-exactly-once'),
  table('cap_usage', '20261201000006-create-caps'),
  table('cap_hits', '20261201000006-create-caps'),
  table('policy_epoch', '20261201000007-policy-epoch'),
  table('mcp_tools', '20261203000101-create-mcp-tools'),
  table('mcp_sessions', '20261204000001-create-mcp-sessions'),
  table('decision_log', '20261205000301-create-decision-log'),
  table('agent_run_keys', '20261206000001-partition-record-tables'),
  table('toolgate_retired_partitions', '20261207000002-retention-bookkeeping'),
  table('decision_log_horizon', '20261207000002-retention-bookkeeping'),
];

/** The bookkeeping tables sequelize-cli's format keeps: applied migrations, and the seeders that ran. */
export const BOOKKEEPING_TABLES = ['SequelizeMeta', 'SequelizeData'] as const;

/** The tables the named migrations (extensions ignored) would create or adopt. */
export function tablesMadeBy(migrations: readonly string[]): ToolgateTable[] {
  const stems = new Set(migrations.map((m) => m.replace(/\.[^.]+$/, '')));
  return TOOLGATE_TABLES.filter((t) => stems.has(t.migration));
}
