// The way back (npm run migrate -- --undo, docs/MIGRATING.md): the database as it was before
// toolgate, with what the legacy application wrote since. In order:
// 1. refused while an instance of toolgate is alive on the database (its heartbeat), unless forced:
//    it would go on serving from tables that are gone;
// 2. toolgate's rows taken out of the legacy tables it adopted (src/db/adopted-rows.ts), while the
//    columns that tell them apart are still there;
// 3. every schema migration reverted: the tables toolgate created dropped, an adopted table's own
//    columns, keys and indexes taken off;
// 4. SequelizeMeta dropped once empty (one that still names another application's migrations is
//    kept), and toolgate's own schema (TOOLGATE_DB_SCHEMA) once nothing is left in it.
import { QueryTypes, type Sequelize } from 'sequelize';
import { removeToolgateRows, type AdoptedRows } from './adopted-rows';
import { InstancesAliveError, liveInstances, type LiveInstance } from './live-instances';
import { migrateDown, withMigrationLock } from './migrate';
import { schemaOf } from './schema';
import { dropSchemaIfEmpty } from './schema-setup';

export interface UndoReport {
  /** Instances alive when a forced undo ran anyway (they now answer 503 tables_missing). */
  forced_past: LiveInstance[];
  adopted_rows: AdoptedRows[];
  schema_migrations_reverted: string[];
  sequelize_meta: 'dropped' | 'kept' | 'absent';
  /** toolgate's own schema, when it has one. */
  schema?: { name: string; result: 'dropped' | 'kept' | 'absent' };
}

export async function undoSchema(sequelize: Sequelize, options: { force: boolean }): Promise<UndoReport> {
  const alive = await liveInstances(sequelize);
  if (alive.length > 0 && !options.force) throw new InstancesAliveError(alive);
  const adopted = await withMigrationLock(sequelize, () =>
    sequelize.transaction((transaction) => removeToolgateRows(sequelize, transaction)),
  );
  // Reverting the tables toolgate created drops the grants and toolkits in them, so the data
  // migration's own undo has nothing to add here.
  const reverted = await migrateDown(sequelize, { to: 0 });
  const report: UndoReport = {
    forced_past: alive,
    adopted_rows: adopted,
    schema_migrations_reverted: reverted,
    sequelize_meta: await dropEmptyBookkeeping(sequelize),
  };
  const schema = schemaOf(sequelize);
  if (schema !== null)
    report.schema = { name: schema, result: await withMigrationLock(sequelize, () => dropSchemaIfEmpty(sequelize, schema)) };
  return report;
}

/** Drops SequelizeMeta when no row is left in it: one with rows records another application's migrations. */
async function dropEmptyBookkeeping(sequelize: Sequelize): Promise<'dropped' | 'kept' | 'absent'> {
  return withMigrationLock(sequelize, () =>
    sequelize.transaction(async (transaction) => {
      const [table] = await sequelize.query<{ present: boolean }>(`SELECT to_regclass('"SequelizeMeta"') IS NOT NULL AS present`, {
        type: QueryTypes.SELECT,
        transaction,
      });
      if (!table?.present) return 'absent';
      await sequelize.query('LOCK TABLE "SequelizeMeta" IN ACCESS EXCLUSIVE MODE', { transaction });
      const left = await sequelize.query('SELECT 1 FROM "SequelizeMeta" LIMIT 1', { type: QueryTypes.SELECT, transaction });
      if (left.length > 0) return 'kept';
      await sequelize.query('DROP TABLE "SequelizeMeta"', { transaction });
      return 'dropped';
    }),
  );
}
