// The migration's own planner settings: JIT is off, work_mem larger and cursors planned for every
// row inside its transactions (dry run, apply, undo), where many short batch queries would each pay
// an LLVM compile, and the pool's other sessions keep the server's settings afterwards.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { createManifest } from '../../src/core/tool-manifest';
import { migrateEnabledTools } from '../../src/legacy/migrate-enabled-tools';
import { undoEnabledTools } from '../../src/legacy/undo-enabled-tools';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertLegacyAgents, LEGACY_AGENTS } from './fixtures/legacy-database';

const manifest = createManifest();
let db: TestDatabase;
let sql: Sequelize;

beforeAll(async () => {
  // One connection: a setting that leaked would be seen by the very next query.
  db = await createTestDatabase({ pool: { max: 1 } } as never);
  sql = db.sequelize;
  await insertLegacyAgents(
    sql,
    LEGACY_AGENTS.filter((a) => a.name !== 'Operator managed'),
  );
});
afterAll(() => db.drop());

/** Asks the server, inside the migration's own transaction, what `jit`, `work_mem` and `cursor_tuple_fraction` are after each of its queries. */
function watchJit(sequelize: Sequelize): { seen: Set<string>; stop(): void } {
  const seen = new Set<string>();
  const original = sequelize.query.bind(sequelize);
  let asking = false;
  const watched = async (...args: Parameters<Sequelize['query']>) => {
    const result = await original(...args);
    const transaction = (args[1] as { transaction?: Transaction } | undefined)?.transaction;
    // The migration's own reads and writes, not the BEGIN and COMMIT that Sequelize sends too.
    const ownQuery = typeof args[0] === 'string' && /\b(agents|agent_toolkits)\b/.test(args[0]);
    if (transaction && ownQuery && !asking) {
      asking = true;
      try {
        const [row] = await original<{ s: string }>(
          `SELECT current_setting('jit') || ' ' || current_setting('work_mem') || ' ' || current_setting('cursor_tuple_fraction') AS s`,
          {
            transaction,
            type: QueryTypes.SELECT,
          },
        );
        seen.add(row!.s);
      } finally {
        asking = false;
      }
    }
    return result;
  };
  sequelize.query = watched as Sequelize['query'];
  return { seen, stop: () => void (sequelize.query = original) };
}

const settingsOfPool = async () =>
  (
    await sql.query<{ s: string }>(
      `SELECT current_setting('jit') || ' ' || current_setting('work_mem') || ' ' || current_setting('cursor_tuple_fraction') AS s`,
      { type: QueryTypes.SELECT },
    )
  )[0]!.s;

describe.each([
  ['a dry run', () => migrateEnabledTools(sql, manifest, { mode: 'dry_run', batchSize: 4 })],
  ['an apply', () => migrateEnabledTools(sql, manifest, { mode: 'apply', batchSize: 4 })],
  ['an undo', () => undoEnabledTools(sql, manifest)],
])('when %s runs on a server with JIT on', (_name, run) => {
  test("then JIT is off, work_mem 64MB and cursors planned for all their rows for its reads and writes, and the pool is back to the server's settings after it", async () => {
    expect(await settingsOfPool()).toBe('on 4MB 0.1');
    const watch = watchJit(sql);
    try {
      await run();
    } finally {
      watch.stop();
    }
    expect([...watch.seen]).toEqual(['off 64MB 1']);
    expect(await settingsOfPool()).toBe('on 4MB 0.1');
  });
});
