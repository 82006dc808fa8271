// Tool calls gain the status `started`: the record is written before the tool runs and completed in
// place after it (SEMANTICS §8), so a tool whose record cannot be written never runs, and a crash
// mid-tool leaves a `started` record behind.
//
// The status check exists under one of two names: tool_calls_status_check when toolgate created the
// table, tool_calls_toolgate_status_check when it adopted a legacy table and added the column. A
// legacy status column toolgate did not add has no check, and gets none.
//
// down() restores the four statuses; a record still `started` then becomes a `failure` that says it
// never completed, since the older schema cannot hold it.
import type { QueryInterface } from 'sequelize';

const CHECKS = ['tool_calls_status_check', 'tool_calls_toolgate_status_check'];
const BEFORE = "'success', 'failure', 'denied', 'skipped'";
const AFTER = "'started', 'success', 'failure', 'denied', 'skipped'";

export async function up(queryInterface: QueryInterface): Promise<void> {
  await replaceChecks(queryInterface, AFTER);
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await replaceChecks(queryInterface, BEFORE, `
    UPDATE tool_calls SET status = 'failure', error = 'never completed: the tool was still running, or the service stopped, when this record was written'
     WHERE status = 'started'`);
}

async function replaceChecks(queryInterface: QueryInterface, statuses: string, before = ''): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const [rows] = await sequelize.query(
      `SELECT conname FROM pg_constraint WHERE conrelid = 'tool_calls'::regclass AND conname IN (:names)`,
      { replacements: { names: CHECKS }, transaction },
    );
    const names = (rows as { conname: string }[]).map((r) => r.conname);
    if (names.length === 0) return;
    if (before) await sequelize.query(before, { transaction });
    for (const name of names) {
      // NULL passes a CHECK: rows of an adopted legacy table may have no status.
      await sequelize.query(`ALTER TABLE tool_calls DROP CONSTRAINT ${name}, ADD CONSTRAINT ${name} CHECK (status IN (${statuses}))`, { transaction });
    }
  });
}
