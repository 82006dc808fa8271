// The migration that binds threads to participants, on a database that already has threads: each
// thread gets an opaque reference, and its senders become its participants as SQL can read them
// (plain ASCII addresses, lowercased, tag cut); a sender SQL cannot reduce is left out (fail
// closed). Down and up again leave the schema as it was.
import { QueryTypes } from 'sequelize';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { routingKeyOf } from '../../src/core/routing-key';
import { createTestDatabase, type TestDatabase } from '../support/database';

const MIGRATION = '20261201000001-bind-threads-to-participants.ts';
const SENDERS = ['Jane <Jane+orders@Acme.com>', 'mara@thescoop.com', 'omar@bücher.de', '"a b"@example.org', 'undisclosed-recipients:;'];

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrateDown(db.sequelize, { to: MIGRATION });
  await db.sequelize.query(`
    INSERT INTO agents (id, name) VALUES (1, 'Old');
    INSERT INTO threads (id, agent_id, subject) VALUES (1, 1, 'Before'), (2, 1, 'Also before');`);
  for (const from of SENDERS) {
    await db.sequelize.query(
      `INSERT INTO agent_runs (agent_id, thread_id, run, message, tools_offered) VALUES (1, 1, 'sender', $1::jsonb, '{}')`,
      {
        bind: [JSON.stringify({ from, body: 'hi' })],
      },
    );
  }
  await migrateUp(db.sequelize);
});
afterAll(() => db.drop());

test('when threads existed before, then each gets a reference of its own', async () => {
  const rows = await db.sequelize.query<{ reference: string }>('SELECT reference FROM threads ORDER BY id', { type: QueryTypes.SELECT });
  expect(rows.map((r) => r.reference)).toEqual([expect.stringMatching(/^thr_[0-9a-f]{32}$/), expect.stringMatching(/^thr_[0-9a-f]{32}$/)]);
  expect(rows[0]!.reference).not.toBe(rows[1]!.reference);
});

test("when their senders are plain addresses, then they become participants with the service's own routing keys; other senders are left out", async () => {
  const rows = await db.sequelize.query<{ routing_key: string }>(
    'SELECT routing_key FROM thread_participants WHERE thread_id = 1 ORDER BY routing_key',
    { type: QueryTypes.SELECT },
  );
  expect(rows.map((r) => r.routing_key)).toEqual([routingKeyOf(SENDERS[0]), routingKeyOf(SENDERS[1])].sort());
});

test('when the migration is undone and done again, then it applies cleanly', async () => {
  expect(await migrateDown(db.sequelize, { to: MIGRATION })).toContain(MIGRATION);
  expect(await migrateUp(db.sequelize)).toContain(MIGRATION);
});
