// Scout, the internal operations agent, handles the shop's own staff only: her access rule
// *@thescoop.com (SEMANTICS §9) refuses every other sender before any tool. With it, her Finance
// attachment can stay open as the seed document has it, so the interim allow rule that closed it
// is removed, only where it is still exactly that one rule. Runs once; an agent that already has
// access rules, or a gate an operator has changed, is left as it is.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const [added] = await sequelize.query(
      `INSERT INTO agent_access_rules (agent_id, kind, pattern)
       SELECT a.id, 'allow', '*@thescoop.com' FROM agents a
        WHERE a.name = 'Scout' AND NOT EXISTS (SELECT 1 FROM agent_access_rules r WHERE r.agent_id = a.id)
       RETURNING agent_id`,
      { transaction },
    );
    for (const { agent_id } of added as { agent_id: number }[]) {
      await sequelize.query(
        `DELETE FROM agent_toolkit_rules r USING agent_toolkits at, toolkits t
          WHERE r.agent_toolkit_id = at.id AND at.toolkit_id = t.id AND at.agent_id = :agent_id AND lower(t.name) = 'finance'
            AND r.kind = 'allow' AND r.pattern = '*@thescoop.com'
            AND (SELECT count(*) FROM agent_toolkit_rules o WHERE o.agent_toolkit_id = at.id) = 1`,
        { replacements: { agent_id }, transaction },
      );
    }
  });
}

// Nothing to undo: the access rule is an operator's to remove, like any other.
export async function down(): Promise<void> {}
