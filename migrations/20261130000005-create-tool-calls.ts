// Tool calls: one record per execution, refusal or skip (SEMANTICS §8), newest read first.
//
// A legacy `tool_calls` table (the Python app logged every tool execution there) is adopted in
// place: the columns toolgate lacks are added, nullable or with a default, so the legacy
// application's own inserts keep working and no legacy row is rewritten. Its legacy columns get no
// new constraint (their rows hold the legacy statuses); the checks on status and run apply only
// to those columns when this migration adds them, and admit NULL for legacy rows. down() drops the
// table only when this migration created it, else only what it added (columns and the index).
import type { QueryInterface } from 'sequelize';
import {
  adoptTable,
  columnsOf,
  undoAdoption,
  markCreated,
  type AdoptionSpec,
} from './lib/adopt-table';

type DataTypesModule = typeof import('sequelize');

const ADOPTED_INDEX = 'tool_calls_toolgate_agent_id_id_idx';

const LEGACY_TOOL_CALLS: AdoptionSpec = {
  table: 'tool_calls',
  required: { id: 'integer' },
  typed: {
    agent_id: 'integer',
    tool_id: 'text',
    tool_name: 'text',
    status: 'text',
    run: 'text',
    routing_key: 'text',
    duration_ms: 'number',
    error: 'text',
    created_at: 'timestamp',
  },
  written: ['agent_id', 'tool_id', 'tool_name', 'status', 'run', 'routing_key', 'duration_ms', 'error', 'created_at'],
  missing: {
    agent_id: 'INTEGER CONSTRAINT tool_calls_toolgate_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE',
    tool_id: 'VARCHAR(64)',
    tool_name: 'VARCHAR(100)',
    status: "VARCHAR(16) CONSTRAINT tool_calls_toolgate_status_check CHECK (status IN ('success', 'failure', 'denied', 'skipped'))",
    run: "VARCHAR(16) CONSTRAINT tool_calls_toolgate_run_check CHECK (run IN ('sender', 'scheduled'))",
    routing_key: 'VARCHAR(320)',
    duration_ms: 'INTEGER NOT NULL DEFAULT 0',
    error: 'TEXT',
    created_at: 'TIMESTAMPTZ NOT NULL DEFAULT now()',
  },
};

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const columns = await columnsOf(sequelize, 'tool_calls', transaction);
    if (columns.length > 0) {
      await adoptTable(sequelize, LEGACY_TOOL_CALLS, columns, transaction);
      await sequelize.query(`CREATE INDEX ${ADOPTED_INDEX} ON tool_calls (agent_id, id)`, { transaction });
      return;
    }
    await queryInterface.createTable(
      'tool_calls',
      {
        id: { type: Sequelize.BIGINT, primaryKey: true, autoIncrement: true, allowNull: false },
        agent_id: {
          type: Sequelize.INTEGER,
          allowNull: false,
          references: { model: 'agents', key: 'id' },
          onDelete: 'CASCADE',
        },
        tool_id: { type: Sequelize.STRING(64), allowNull: false },
        tool_name: { type: Sequelize.STRING(100), allowNull: false },
        status: { type: Sequelize.STRING(16), allowNull: false },
        run: { type: Sequelize.STRING(16), allowNull: false },
        routing_key: { type: Sequelize.STRING(320), allowNull: true },
        duration_ms: { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 },
        error: { type: Sequelize.TEXT, allowNull: true },
        created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
      },
      { transaction },
    );
    await sequelize.query(
      `ALTER TABLE tool_calls ADD CONSTRAINT tool_calls_status_check
         CHECK (status IN ('success', 'failure', 'denied', 'skipped'));
       ALTER TABLE tool_calls ADD CONSTRAINT tool_calls_run_check CHECK (run IN ('sender', 'scheduled'));`,
      { transaction },
    );
    await queryInterface.addIndex('tool_calls', ['agent_id', 'id'], { name: 'tool_calls_agent_id_id_idx', transaction });
    await markCreated(sequelize, 'tool_calls', transaction);
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction((transaction) => undoAdoption(sequelize, 'tool_calls', [ADOPTED_INDEX], transaction));
}
