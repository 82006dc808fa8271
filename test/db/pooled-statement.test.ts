// The statements every dispatched tool waits on go straight to a connection of the pool, named so
// the server plans them once per connection. A server connection that refuses the name (a pooler in
// transaction mode hands each statement to another server connection) ran nothing, so the statement
// is sent again unnamed, and so is every later one: the caller never sees the refusal.
import { QueryTypes } from 'sequelize';
import { pooledQuery, type PooledStatement } from '../../src/db/pooled-statement';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;

beforeEach(async () => {
  // One connection, so what the test does to it is what the next statement meets.
  db = await createTestDatabase({ pool: { max: 1 } });
  await db.sequelize.query('CREATE TABLE counted (id SERIAL PRIMARY KEY, note TEXT NOT NULL)');
});
afterEach(() => db.drop());

const insert: PooledStatement = { name: 'test_counted_insert', text: 'INSERT INTO counted (note) VALUES ($1::text) RETURNING id' };

async function rows(): Promise<string[]> {
  const found = await db.sequelize.query<{ note: string }>('SELECT note FROM counted ORDER BY id', { type: QueryTypes.SELECT });
  return found.map((r) => r.note);
}

test('when a statement runs, then its values are parameters and its rows come back', async () => {
  const first = await pooledQuery<{ id: number }>(db.sequelize, insert, ["it's $1 -- not SQL"]);
  const second = await pooledQuery<{ id: number }>(db.sequelize, insert, ['again']);
  expect([first.rowCount, second.rowCount]).toEqual([1, 1]);
  expect(Number(second.rows[0]!.id)).toBe(Number(first.rows[0]!.id) + 1);
  expect(await rows()).toEqual(["it's $1 -- not SQL", 'again']);
});

test('when the server connection already has a statement of that name, then the statement runs once, unnamed', async () => {
  await db.sequelize.query(`PREPARE ${insert.name} AS SELECT 1`);
  await pooledQuery(db.sequelize, insert, ['once']);
  await pooledQuery(db.sequelize, insert, ['twice']);
  expect(await rows()).toEqual(['once', 'twice']);
});

test('when the server connection lost the statement after it was planned, then the statement runs once, unnamed', async () => {
  await pooledQuery(db.sequelize, insert, ['planned']);
  await db.sequelize.query('DEALLOCATE ALL');
  await pooledQuery(db.sequelize, insert, ['after']);
  await pooledQuery(db.sequelize, insert, ['later']);
  expect(await rows()).toEqual(['planned', 'after', 'later']);
});

test("when a statement fails, then the error is the driver's and the connection serves the next one", async () => {
  await expect(pooledQuery(db.sequelize, insert, [null])).rejects.toMatchObject({ code: '23502' });
  await pooledQuery(db.sequelize, insert, ['next']);
  expect(await rows()).toEqual(['next']);
});
