// Read-your-writes on one instance: which statements, seen by Sequelize's afterQuery hook, empty the
// policy cache. Values Sequelize pastes into the SQL (a thread's subject, a model's reply) never do.
import type { Sequelize } from 'sequelize';
import { watchPolicyWrites } from '../../src/db/policy-write-watch';

type AfterQuery = (options: object, query: { sql: string }) => void;

/** Whether a statement run outside a transaction tells watchPolicyWrites' caller of a policy write. */
function tells(sql: string): boolean {
  let afterQuery: AfterQuery | undefined;
  const sequelize = {
    addHook: (_type: string, _name: string, hook: AfterQuery) => (afterQuery = hook),
    removeHook: () => (afterQuery = undefined),
  } as unknown as Sequelize;
  let writes = 0;
  const unwatch = watchPolicyWrites(sequelize, () => (writes += 1));
  afterQuery!({}, { sql });
  unwatch();
  return writes === 1;
}

test('when a statement writes a policy table, then it counts, quoted or not', () => {
  expect(tells('INSERT INTO "agents" ("id","name") VALUES (DEFAULT,\'Sundae\') RETURNING "id"')).toBe(true);
  expect(tells('DELETE FROM agent_toolkit_rules WHERE id = 3')).toBe(true);
  expect(tells('WITH gone AS (DELETE FROM toolkits WHERE id = 2 RETURNING id) SELECT count(*) FROM gone')).toBe(true);
});

test('when a statement only reads, then it does not count, with a WITH or without', () => {
  expect(tells('SELECT a.id FROM agents a JOIN agent_toolkits at ON at.agent_id = a.id')).toBe(false);
  expect(tells('WITH p AS MATERIALIZED (SELECT 1 AS one) SELECT a.id FROM agents a CROSS JOIN p')).toBe(false);
});

test('when a read-only WITH only quotes a word that writes, then it does not count', () => {
  expect(tells("WITH p AS (SELECT 'DELETE' AS word) SELECT word FROM p JOIN agents a ON true")).toBe(false);
});

test("when a policy table's name is only in a value pasted into the SQL, then it does not count", () => {
  expect(tells("INSERT INTO threads (agent_id, subject) VALUES (1, 'Question about your AI agents') RETURNING id")).toBe(false);
  expect(tells("UPDATE agent_runs SET reply = 'It''s in toolkits; see agents' WHERE id = 9")).toBe(false);
});

test('when a value holds a doubled quote, then the table named after it still counts', () => {
  expect(tells("UPDATE agents SET name = 'O''Brien''s desk' WHERE id = 1")).toBe(true);
  expect(tells("UPDATE threads SET subject = 'it''s' WHERE id IN (SELECT id FROM agents); DELETE FROM toolkits")).toBe(true);
});
