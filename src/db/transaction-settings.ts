// Planner settings for one transaction of toolgate's own (SET LOCAL): they end with it, so the
// pool's connections go back to the server's settings for every other query.
import type { Sequelize, Transaction } from 'sequelize';

/**
 * For long maintenance work made of many short batch queries (the enabled_tools migration, its
 * undo). JIT off: on a large table each batch's cost estimate crosses `jit_above_cost`, and the
 * LLVM compile then costs more than the query it speeds up, once per batch. More `work_mem`: the
 * attachments aggregated per agent and the policy-version trigger's sort of every changed agent
 * spill to disk at the default 4 MB on a million agents (see PERFORMANCE.md). A cursor planned for
 * all its rows (cursor_tuple_fraction 1): the migration reads every row it declares, and planned for
 * the first tenth (the default), a cursor over agents and their attachments took a nested loop that
 * read every attachment again for each agent (20 s for 20,000 agents; quadratic).
 */
export const BATCH_WORK_SETTINGS: Readonly<Record<string, string>> = { jit: 'off', work_mem: '64MB', cursor_tuple_fraction: '1' };

/** Applies `settings` to the rest of `transaction` only. Names and values are toolgate's own constants. */
export async function setLocal(sequelize: Sequelize, transaction: Transaction, settings: Readonly<Record<string, string>>): Promise<void> {
  for (const [name, value] of Object.entries(settings)) {
    await sequelize.query('SELECT set_config($1, $2, true)', { bind: [name, value], transaction });
  }
}
