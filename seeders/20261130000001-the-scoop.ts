// The seed document's scenario, ready to replay: The Scoop's agents Sundae (support) and Scout
// (internal ops), the Support, Finance and Operations toolkits, and their grants on the seed's
// terms. It runs once per database (recorded in SequelizeData), and not at all where any of its
// agents or toolkits already exists, so nothing an operator deleted is ever made again.
//
// Scout's Finance attachment is open, as the seed document has it, only because her access rule
// *@thescoop.com (SEMANTICS §9) refuses every other sender before any tool: both are written in
// the one transaction, so there is never an open refund a stranger could reach.
import type { QueryInterface } from 'sequelize';
import { dropScoopData, ensureScoopData } from '../src/app/demo/scoop-data';

const TOOLKITS = [
  ['Support', 'Order look-ups and stock checks for anyone who reaches the agent.', ['lookup_order', 'check_flavor_stock']],
  ['Finance', 'Refunds: grant only to the shop itself.', ['process_refund']],
  ['Operations', 'What the morning stock report needs.', ['check_flavor_stock', 'send_email']],
] as const;

const AGENTS = [
  ['Sundae', "The Scoop's customer support agent."],
  ['Scout', "The Scoop's internal operations agent, for the shop's own staff."],
] as const;

// [agent, access rules (allow)]
const ACCESS_RULES = [['Scout', ['*@thescoop.com']]] as const;

// [agent, toolkit, allow_proactive, allow rules]
const GRANTS = [
  ['Sundae', 'Support', false, []],
  ['Sundae', 'Finance', false, ['*@thescoop.com']],
  ['Scout', 'Finance', false, []],
  ['Scout', 'Operations', true, []],
] as const;

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await ensureScoopData(sequelize, transaction);
    const [seen] = await sequelize.query(
      `SELECT 1 FROM agents WHERE name IN (:agents) UNION ALL SELECT 1 FROM toolkits WHERE lower(name) IN (:toolkits) LIMIT 1`,
      { replacements: { agents: AGENTS.map(([name]) => name), toolkits: TOOLKITS.map(([name]) => name.toLowerCase()) }, transaction },
    );
    if (seen.length > 0) return;
    for (const [name, description, members] of TOOLKITS) {
      await sequelize.query(
        `INSERT INTO toolkits (name, description, member_tool_ids) VALUES (:name, :description, ARRAY[:members]::varchar(64)[])
         ON CONFLICT ((lower(name))) DO NOTHING`,
        { replacements: { name, description, members: [...members] }, transaction },
      );
    }
    for (const [name, description] of AGENTS) {
      await sequelize.query(
        `INSERT INTO agents (name, description) SELECT :name, :description
          WHERE NOT EXISTS (SELECT 1 FROM agents WHERE name = :name)`,
        { replacements: { name, description }, transaction },
      );
    }
    for (const [agent, toolkit, allowScheduled, allowRules] of GRANTS) {
      const [rows] = await sequelize.query(
        `WITH a AS (SELECT id FROM agents WHERE name = :agent ORDER BY id LIMIT 1),
              t AS (SELECT id FROM toolkits WHERE lower(name) = lower(:toolkit)),
              made AS (
                INSERT INTO agent_toolkits (agent_id, toolkit_id, allow_proactive)
                SELECT a.id, t.id, :allowScheduled FROM a, t
                ON CONFLICT (agent_id, toolkit_id) DO NOTHING RETURNING id)
         SELECT id FROM made`,
        { replacements: { agent, toolkit, allowScheduled }, transaction },
      );
      // Rules go only on a grant made now: an operator's later edit of the gate is never undone.
      const made = (rows as { id: number }[])[0];
      for (const pattern of made ? allowRules : []) {
        await sequelize.query(
          `INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (:id, 'allow', :pattern)
           ON CONFLICT DO NOTHING`,
          { replacements: { id: made.id, pattern }, transaction },
        );
      }
    }
    for (const [agent, patterns] of ACCESS_RULES) {
      for (const pattern of patterns) {
        await sequelize.query(
          `INSERT INTO agent_access_rules (agent_id, kind, pattern) SELECT id, 'allow', :pattern FROM agents WHERE name = :agent ORDER BY id LIMIT 1`,
          { replacements: { agent, pattern }, transaction },
        );
      }
    }
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(`DELETE FROM agents WHERE name IN ('Sundae', 'Scout')`, { transaction });
    await sequelize.query(`DELETE FROM toolkits WHERE name IN ('Support', 'Finance', 'Operations') AND system_key IS NULL`, {
      transaction,
    });
    await dropScoopData(sequelize, transaction);
  });
}
