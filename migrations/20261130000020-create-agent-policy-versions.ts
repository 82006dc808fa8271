// One version per agent, raised in the same transaction as every change to what the agent's policy
// reads (migration 21's triggers). Strict mode checks it with one indexed read per run, for
// deployments where LISTEN cannot work (PgBouncer in transaction mode): a cached policy whose version
// is not the stored one is read again. Every existing agent starts at version 1; a row goes with its
// agent, so "no row" means "no such agent".
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `CREATE TABLE agent_policy_versions (
         agent_id integer PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
         version bigint NOT NULL DEFAULT 1
       );
       COMMENT ON TABLE agent_policy_versions IS 'created by toolgate';
       INSERT INTO agent_policy_versions (agent_id, version) SELECT id, 1 FROM agents;`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE agent_policy_versions');
}
