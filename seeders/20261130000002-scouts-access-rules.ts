// A demo seeded before agents had access rules left Scout's Finance attachment open with nothing in
// front of it, so any stranger writing to Scout could have a refund issued. This gives Scout her
// access rule *@thescoop.com (SEMANTICS §9), once, and only where she has no access rules yet: a
// demo seeded now already has it, and an operator's own rules are left as they are.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`
    INSERT INTO agent_access_rules (agent_id, kind, pattern)
    SELECT a.id, 'allow', '*@thescoop.com' FROM agents a
     WHERE a.name = 'Scout' AND NOT EXISTS (SELECT 1 FROM agent_access_rules r WHERE r.agent_id = a.id)`);
}

// Nothing to undo: the access rule is an operator's to remove, like any other.
export async function down(): Promise<void> {}
