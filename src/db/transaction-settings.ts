// Planner settings for one transaction of toolgate's own (SET LOCAL): they end with it, so the
// pool's connections go back to the server's settings for every other query.
import type { Sequelize, Transaction } from 'sequelize';

/**
 * For long maintenance work made of many short batch queries (the enabled_tools migration, its
 * undo). JIT off: on a large table each batch's cost estimate crosses `jit_above_cost`, and the
 * LLVM compile then costs more than the query it speeds up, once per batch. More `work_mem`: the
 * attachments aggregated per agent and the policy-version trigger's sort of every changed agent
 * spill to disk at the default 4 MB on a million agents (see PERFORMANCE.md).
 */
export const BATCH_WORK_SETTINGS: Readonly<Record<string, string>> = { jit: 'off', work_mem: '64MB' };

/** Applies `settings` to the rest of `transaction` only. Names and values are toolgate's own constants. */
export async function setLocal(sequelize: Sequelize, transaction: Transaction, settings: Readonly<Record<string, string>>): Promise<void> {
  for (const [name, value] of Object.entries(settings)) {
    await sequelize.query('SELECT set_config($1, $2, true)', { bind: [name, value], transaction });
  }
}
