// One version per agent, raised in the same transaction as every change to what the agent's policy
// reads (migration 21's triggers). Strict mode checks it with one indexed read per run, for
// deployments where LISTEN cannot work (PgBouncer in transaction mode): a cached policy whose version
// is not the stored one is read again. Every existing agent starts at version 1; a row goes with its
// agent, so "no row" means "no such agent".
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    // The rows first, then the key and the foreign key: on an adopted table of a million agents,
    // building the index in one sort and checking the foreign key in one join takes a second or
    // two, where inserting into a table that has both checks and indexes each row on its own (17 s
    // at a million). The table, its constraints and their names are the same either way.
    await queryInterface.sequelize.query(
      `CREATE TABLE agent_policy_versions (
         agent_id integer NOT NULL,
         version bigint NOT NULL DEFAULT 1
       );
       COMMENT ON TABLE agent_policy_versions IS 'created by toolgate';
       INSERT INTO agent_policy_versions (agent_id, version) SELECT id, 1 FROM agents;
       ALTER TABLE agent_policy_versions
         ADD CONSTRAINT agent_policy_versions_pkey PRIMARY KEY (agent_id),
         ADD CONSTRAINT agent_policy_versions_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents (id) ON DELETE CASCADE;`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE agent_policy_versions');
}
