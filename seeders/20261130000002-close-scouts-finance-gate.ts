// A demo seeded before the hostile review gave Scout's Finance attachment no rules, so any stranger
// writing to Scout could have a refund issued. This closes that attachment to *@thescoop.com, once,
// and only where it is still open: a gate an operator has since set is left as it is.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`
    INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern)
    SELECT at.id, 'allow', '*@thescoop.com'
      FROM agent_toolkits at
      JOIN agents a ON a.id = at.agent_id AND a.name = 'Scout'
      JOIN toolkits t ON t.id = at.toolkit_id AND lower(t.name) = 'finance'
     WHERE NOT EXISTS (SELECT 1 FROM agent_toolkit_rules r WHERE r.agent_toolkit_id = at.id)`);
}

// Nothing to undo: the rule is an operator's to remove, like any other.
export async function down(): Promise<void> {}
