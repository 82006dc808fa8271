// Moves one of toolgate's record tables, data and all, into a table partitioned by time, holding no
// lock for longer than a few catalog changes, and back (docs/MIGRATING.md, "Partitions"):
//
// 1. a CHECK that every row is older than the bound is added NOT VALID (no scan), then VALIDATEd
//    (a scan that lets reads and writes go on);
// 2. the unique index the partitioned table's key needs, the table's own key plus the time column,
//    is built (kept when an operator built it beforehand, CONCURRENTLY, under this name);
// 3. in one short transaction: the table is renamed `<table>_legacy` (its indexes and key with it),
//    a partitioned table is made from its definition as it stands (LIKE: every column, default,
//    check and comment any migration gave it), with the same indexes, foreign keys and sequence,
//    and the old table is attached as the partition for everything before the bound: the CHECK
//    proves the range, so ATTACH reads no row, and each index of the old table becomes the
//    partition's part of the new one, built again for none.
//
// Only a table toolgate created (its comment says so) is moved: an adopted legacy table is the
// host's own and stays as it is. A unique index other than the key stops the move: it could not
// hold on a partitioned table, and no guarantee is dropped unsaid.
import type { Sequelize } from 'sequelize';
import { CREATED_MARK } from './adopt-table';

export interface PartitionSpec {
  table: string;
  /** The time column the partitions split on (NOT NULL). */
  column: string;
}

type Rows<T> = Promise<T[]>;

export const LEGACY_SUFFIX = '_legacy';
const BOUND_CHECK = (table: string) => `${table}_toolgate_partition_bound`;
const KEY_INDEX = (table: string) => `${table}_toolgate_partition_key`;

function q(sequelize: Sequelize) {
  return async <T>(sql: string, replacements: Record<string, unknown> = {}): Rows<T> =>
    (await sequelize.query(sql, { replacements }))[0] as T[];
}

export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Whether the table is toolgate's, plain, and so to be moved: false for an adopted one or one already partitioned. */
export async function toBeMoved(sequelize: Sequelize, table: string): Promise<boolean> {
  const [row] = await q(sequelize)<{ kind: string; comment: string | null }>(
    `SELECT c.relkind AS kind, obj_description(c.oid, 'pg_class') AS comment FROM pg_class c WHERE c.oid = to_regclass(:table)`,
    { table },
  );
  return row !== undefined && row.kind === 'r' && row.comment === CREATED_MARK;
}

/** The bound: the first of the month after the next week's, in UTC (a move that runs across a month's end still holds). */
async function boundOf(sequelize: Sequelize, table: string): Promise<string> {
  const [existing] = await q(sequelize)<{ def: string }>(
    `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = to_regclass(:table) AND conname = :name`,
    { table, name: BOUND_CHECK(table) },
  );
  if (existing) {
    const m = /'([^']+)'/.exec(existing.def);
    if (m) return m[1]!;
  }
  const [row] = await q(sequelize)<{ bound: string }>(
    `SELECT to_char((date_trunc('month', now() + interval '7 days', 'UTC') + interval '1 month') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T00:00:00Z"') AS bound`,
  );
  return row!.bound;
}

/** Steps 1 and 2, each in a transaction of its own. */
export async function prepareMove(sequelize: Sequelize, spec: PartitionSpec, key: readonly string[]): Promise<string> {
  const { table, column } = spec;
  const bound = await boundOf(sequelize, table);
  await sequelize.query(
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass('${table}') AND conname = '${BOUND_CHECK(table)}') THEN
         ALTER TABLE ${ident(table)} ADD CONSTRAINT ${ident(BOUND_CHECK(table))}
           CHECK (${ident(column)} IS NOT NULL AND ${ident(column)} < '${bound}'::timestamptz) NOT VALID;
       END IF;
     END $$`,
  );
  await sequelize.query(`ALTER TABLE ${ident(table)} VALIDATE CONSTRAINT ${ident(BOUND_CHECK(table))}`);
  if (key.length > 0) {
    const index = KEY_INDEX(table);
    await sequelize.query(
      `DO $$ BEGIN
         IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('${index}') AND NOT indisvalid) THEN
           DROP INDEX ${ident(index)};
         END IF;
       END $$;
       CREATE UNIQUE INDEX IF NOT EXISTS ${ident(index)} ON ${ident(table)} (${[...key, column].map(ident).join(', ')})`,
    );
  }
  return bound;
}

interface IndexRow {
  name: string;
  def: string;
  primary: boolean;
  unique: boolean;
}

/** The table's key columns ([] when it has none), refusing a unique index besides the key. */
export async function keyOf(sequelize: Sequelize, table: string): Promise<string[]> {
  const indexes = await indexesOf(sequelize, table);
  const unique = indexes.filter((i) => i.unique && !i.primary && i.name !== KEY_INDEX(table));
  if (unique.length > 0)
    throw new Error(
      `${table} has the unique index ${unique.map((i) => i.name).join(', ')}, which a table partitioned by time cannot hold: ` +
        `give the uniqueness a table of its own (as agent_run_keys holds the runs' ids) before this migration runs`,
    );
  const [pk] = await q(sequelize)<{ columns: string[] }>(
    `SELECT array_agg(a.attname ORDER BY k.ord)::text[] AS columns
       FROM pg_constraint c CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
      WHERE c.conrelid = to_regclass(:table) AND c.contype = 'p'`,
    { table },
  );
  return pk?.columns ?? [];
}

function indexesOf(sequelize: Sequelize, table: string): Rows<IndexRow> {
  return q(sequelize)<IndexRow>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisprimary AS primary, i.indisunique AS unique
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = to_regclass(:table) ORDER BY c.relname`,
    { table },
  );
}

/** Step 3: the swap, in one transaction. */
export async function swapIn(sequelize: Sequelize, spec: PartitionSpec, key: readonly string[], bound: string): Promise<void> {
  const { table, column } = spec;
  const legacy = `${table}${LEGACY_SUFFIX}`;
  await sequelize.transaction(async (transaction) => {
    const run = async <T>(sql: string, replacements: Record<string, unknown> = {}): Rows<T> =>
      (await sequelize.query(sql, { replacements, transaction }))[0] as T[];
    await run(`LOCK TABLE ${ident(table)} IN ACCESS EXCLUSIVE MODE`);
    const [{ qualified }] = (await run<{ qualified: string }>(`SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS qualified
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(:table)`, { table })) as [
      { qualified: string },
    ];
    const indexes = (await run<IndexRow>(
      `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisprimary AS primary, i.indisunique AS unique
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(:table) ORDER BY c.relname`,
      { table },
    )).filter((i) => !i.primary && i.name !== KEY_INDEX(table));
    const foreign = await run<{ name: string; def: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = to_regclass(:table) AND contype = 'f' ORDER BY conname`,
      { table },
    );
    const sequences = await run<{ column: string; sequence: string }>(
      `SELECT a.attname AS column, pg_get_serial_sequence(:table, a.attname) AS sequence
         FROM pg_attribute a WHERE a.attrelid = to_regclass(:table) AND a.attnum > 0 AND NOT a.attisdropped
          AND pg_get_serial_sequence(:table, a.attname) IS NOT NULL`,
      { table },
    );
    const [pk] = await run<{ name: string }>(`SELECT conname AS name FROM pg_constraint WHERE conrelid = to_regclass(:table) AND contype = 'p'`, {
      table,
    });
    const triggers = await triggersOf(run, table);

    await run(`ALTER TABLE ${ident(table)} RENAME TO ${ident(legacy)}`);
    for (const index of indexes) await run(`ALTER INDEX ${ident(index.name)} RENAME TO ${ident(legacyName(index.name))}`);
    // The partition's key is the partitioned table's: the old key (its foreign keys moved beforehand) gives way to it.
    if (pk) {
      await run(`ALTER TABLE ${ident(legacy)} DROP CONSTRAINT ${ident(pk.name)}`);
      await run(`ALTER TABLE ${ident(legacy)} ADD CONSTRAINT ${ident(legacyName(pk.name))} PRIMARY KEY USING INDEX ${ident(KEY_INDEX(table))}`);
    }

    await run(
      `CREATE TABLE ${ident(table)} (LIKE ${ident(legacy)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)
         PARTITION BY RANGE (${ident(column)});
       ALTER TABLE ${ident(table)} DROP CONSTRAINT ${ident(BOUND_CHECK(table))};
       COMMENT ON TABLE ${ident(table)} IS '${CREATED_MARK}'`,
    );
    if (pk) await run(`ALTER TABLE ${ident(table)} ADD CONSTRAINT ${ident(pk.name)} PRIMARY KEY (${[...key, column].map(ident).join(', ')})`);
    for (const index of indexes) await run(onlyParent(index.def, qualified));
    for (const fk of foreign) await run(`ALTER TABLE ${ident(table)} ADD CONSTRAINT ${ident(fk.name)} ${fk.def}`);
    for (const s of sequences) await run(`ALTER SEQUENCE ${s.sequence} OWNED BY ${ident(table)}.${ident(s.column)}`);
    await run(`ALTER TABLE ${ident(table)} ATTACH PARTITION ${ident(legacy)} FOR VALUES FROM (MINVALUE) TO ('${bound}')`);
    // The table's row triggers (the decision log's, the runs' keys) become the partitioned table's,
    // which clones them onto every partition, the old one included, and onto each one made later.
    for (const trigger of triggers) {
      await run(`DROP TRIGGER ${ident(trigger.name)} ON ${ident(legacy)}`);
      await run(trigger.def);
    }
    await run(`SELECT toolgate_make_partitions(:table, now(), now() + interval '2 months', 'month')`, { table });
  });
}

/** The old table's index definition, as one on the partitioned table alone (ATTACH adds the partition's). */
function onlyParent(def: string, qualified: string): string {
  const on = ` ON ${qualified} USING `;
  const at = def.indexOf(on);
  if (at < 0) throw new Error(`unexpected index definition: ${def}`);
  return `${def.slice(0, at)} ON ONLY ${qualified} USING ${def.slice(at + on.length)}`;
}

function legacyName(name: string): string {
  const renamed = `${name}${LEGACY_SUFFIX}`;
  if (renamed.length > 63) throw new Error(`${name} is too long a name to keep with ${LEGACY_SUFFIX} after it`);
  return renamed;
}

/**
 * The way back, in one transaction: every partition's rows go back into the old table, which is
 * detached and renamed back (its key, indexes, sequence and foreign keys as they were), and the
 * partitioned table is dropped. Rows written since the move are kept.
 */
export async function moveBack(sequelize: Sequelize, spec: PartitionSpec): Promise<void> {
  const { table } = spec;
  const legacy = `${table}${LEGACY_SUFFIX}`;
  await sequelize.transaction(async (transaction) => {
    const run = async <T>(sql: string, replacements: Record<string, unknown> = {}): Rows<T> =>
      (await sequelize.query(sql, { replacements, transaction }))[0] as T[];
    const [kind] = await run<{ kind: string }>(`SELECT relkind AS kind FROM pg_class WHERE oid = to_regclass(:table)`, { table });
    if (kind?.kind !== 'p') return;
    await run(`LOCK TABLE ${ident(table)} IN ACCESS EXCLUSIVE MODE`);
    // The partitioned table's triggers go first, so that none fires on the rows moved back, and come
    // back on the plain table at the end.
    const triggers = await triggersOf(run, table);
    for (const trigger of triggers) await run(`DROP TRIGGER ${ident(trigger.name)} ON ${ident(table)}`);
    const others = await run<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = to_regclass(:table) AND c.oid <> to_regclass(:legacy) ORDER BY c.relname`,
      { table, legacy },
    );
    const hasLegacy = (await run(`SELECT 1 FROM pg_inherits WHERE inhparent = to_regclass(:table) AND inhrelid = to_regclass(:legacy)`, { table, legacy }))
      .length;
    if (!hasLegacy) throw new Error(`${legacy} is no longer a partition of ${table} (a retention dropped it): this migration cannot be undone`);
    const columns = await run<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass(:legacy) AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
      { legacy },
    );
    const list = columns.map((c) => ident(c.name)).join(', ');
    const indexes = await run<{ name: string }>(
      `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(:legacy) ORDER BY c.relname`,
      { legacy },
    );
    const sequences = await run<{ column: string; sequence: string }>(
      `SELECT a.attname AS column, pg_get_serial_sequence(:table, a.attname) AS sequence
         FROM pg_attribute a WHERE a.attrelid = to_regclass(:table) AND a.attnum > 0 AND NOT a.attisdropped
          AND pg_get_serial_sequence(:table, a.attname) IS NOT NULL`,
      { table },
    );
    const [pk] = await run<{ name: string }>(`SELECT conname AS name FROM pg_constraint WHERE conrelid = to_regclass(:legacy) AND contype = 'p'`, {
      legacy,
    });

    const [keyRow] = await run<{ columns: string[] }>(
      `SELECT array_agg(a.attname ORDER BY k.ord)::text[] AS columns
         FROM pg_constraint c CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
        WHERE c.conrelid = to_regclass(:legacy) AND c.contype = 'p'`,
      { legacy },
    );
    const key = (keyRow?.columns ?? []).filter((c) => c !== spec.column);

    await run(`ALTER TABLE ${ident(table)} DETACH PARTITION ${ident(legacy)}`);
    await run(`ALTER TABLE ${ident(legacy)} DROP CONSTRAINT ${ident(BOUND_CHECK(table))}`);
    for (const p of others) {
      await run(`INSERT INTO ${ident(legacy)} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM ${ident(p.name)}`);
    }
    for (const s of sequences) await run(`ALTER SEQUENCE ${s.sequence} OWNED BY ${ident(legacy)}.${ident(s.column)}`);
    await run(`DROP TABLE ${ident(table)}`);
    await run(`ALTER TABLE ${ident(legacy)} RENAME TO ${ident(table)}`);
    // The old key again, its index built anew (the undo's one scan), in place of the partitioned table's.
    if (pk) {
      await run(`ALTER TABLE ${ident(table)} DROP CONSTRAINT ${ident(pk.name)}`);
      await run(`ALTER TABLE ${ident(table)} ADD CONSTRAINT ${ident(unlegacy(pk.name))} PRIMARY KEY (${key.map(ident).join(', ')})`);
    }
    for (const index of indexes) {
      if (index.name.endsWith(LEGACY_SUFFIX) && index.name !== pk?.name)
        await run(`ALTER INDEX ${ident(index.name)} RENAME TO ${ident(unlegacy(index.name))}`);
    }
    for (const trigger of triggers) await run(trigger.def);
  });
}

/** A table's own triggers (not the ones PostgreSQL keeps for constraints, nor clones of a parent's), each as the statement that makes it. */
function triggersOf(
  run: <T>(sql: string, replacements?: Record<string, unknown>) => Rows<T>,
  table: string,
): Rows<{ name: string; def: string }> {
  return run<{ name: string; def: string }>(
    `SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger
      WHERE tgrelid = to_regclass(:table) AND NOT tgisinternal AND tgparentid = 0 ORDER BY tgname`,
    { table },
  );
}

const unlegacy = (name: string) => name.slice(0, -LEGACY_SUFFIX.length);
