// For schema migrations that adopt a table the legacy application made: read its columns, refuse
// (before changing anything) a table toolgate could not use, add only the missing columns, and mark
// what was made so that down() removes exactly that. Same marks as the documents migration: a table
// toolgate creates carries the comment 'created by toolgate', a column it adds 'added by toolgate'.
import type { Sequelize, Transaction } from 'sequelize';

export const CREATED_MARK = 'created by toolgate';
export const ADDED_MARK = 'added by toolgate';

export interface ColumnInfo {
  name: string;
  /** The type as PostgreSQL spells it, e.g. `integer`, `character varying`, `timestamp without time zone`. */
  type: string;
  /** An insert must name it: NOT NULL with no default, not an identity nor generated column. */
  required: boolean;
  comment: string | null;
}

export type TypeFamily = 'integer' | 'text' | 'timestamp' | 'number' | 'boolean';

const FAMILIES: Record<TypeFamily, readonly string[]> = {
  integer: ['smallint', 'integer', 'bigint'],
  text: ['text', 'character varying', 'character'],
  timestamp: ['timestamp with time zone', 'timestamp without time zone'],
  number: ['smallint', 'integer', 'bigint', 'real', 'double precision', 'numeric'],
  boolean: ['boolean'],
};

/** What toolgate needs of an existing table. */
export interface AdoptionSpec {
  table: string;
  /** Columns that must already exist, with their type family. */
  required: Record<string, TypeFamily>;
  /** Columns toolgate reads or writes when they exist (or once added), with their type family. */
  typed: Record<string, TypeFamily>;
  /** Columns toolgate's inserts fill: any other required column would make them fail. */
  written: readonly string[];
  /** DDL for each column toolgate adds when it is missing (after `ADD COLUMN <name>`). */
  missing: Record<string, string>;
}

/** The table's columns, [] when there is no such table. */
export async function columnsOf(sequelize: Sequelize, table: string, transaction: Transaction): Promise<ColumnInfo[]> {
  const [rows] = (await sequelize.query(
    `SELECT a.attname AS name, format_type(a.atttypid, NULL) AS type,
            (a.attnotnull AND NOT a.atthasdef AND a.attidentity = '' AND a.attgenerated = '') AS required,
            col_description(a.attrelid, a.attnum) AS comment
       FROM pg_attribute a
      WHERE a.attrelid = to_regclass(:table) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    { replacements: { table }, transaction },
  )) as [ColumnInfo[], unknown];
  return rows;
}

export async function tableComment(sequelize: Sequelize, table: string, transaction: Transaction): Promise<string | null> {
  const [[row]] = (await sequelize.query(`SELECT obj_description(to_regclass(:table), 'pg_class') AS comment`, {
    replacements: { table },
    transaction,
  })) as [{ comment: string | null }[], unknown];
  return row?.comment ?? null;
}

/** Marks a table this migration created, so that down() may drop it (and only then). */
export async function markCreated(sequelize: Sequelize, table: string, transaction: Transaction): Promise<void> {
  await sequelize.query(`COMMENT ON TABLE ${ident(table)} IS '${CREATED_MARK}'`, { transaction });
}

/**
 * Adopts an existing table: checks it against `spec` (throwing, with nothing changed, when toolgate
 * could not use it), then adds the missing columns, each marked. Returns the names added.
 */
export async function adoptTable(sequelize: Sequelize, spec: AdoptionSpec, columns: ColumnInfo[], transaction: Transaction): Promise<string[]> {
  const problems = adoptionProblems(spec, columns);
  if (problems.length > 0) {
    throw new Error(`Cannot adopt the legacy "${spec.table}" table: ${problems.join('; ')}. Nothing was changed; fix the table, then run the migrations again.`);
  }
  const have = new Set(columns.map((c) => c.name));
  const added: string[] = [];
  for (const [name, ddl] of Object.entries(spec.missing)) {
    if (have.has(name)) continue;
    await sequelize.query(`ALTER TABLE ${ident(spec.table)} ADD COLUMN ${ident(name)} ${ddl}`, { transaction });
    await sequelize.query(`COMMENT ON COLUMN ${ident(spec.table)}.${ident(name)} IS '${ADDED_MARK}'`, { transaction });
    added.push(name);
  }
  return added;
}

export function adoptionProblems(spec: AdoptionSpec, columns: ColumnInfo[]): string[] {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const problems: string[] = [];
  for (const name of Object.keys(spec.required)) {
    if (!byName.has(name)) problems.push(`it has no "${name}" column`);
  }
  for (const [name, family] of Object.entries({ ...spec.typed, ...spec.required })) {
    const column = byName.get(name);
    if (column && !FAMILIES[family].includes(column.type)) problems.push(`its "${name}" column is ${column.type}, where toolgate needs ${FAMILIES[family].join(' or ')}`);
  }
  const blocking = columns.filter((c) => c.required && !spec.written.includes(c.name)).map((c) => c.name);
  if (blocking.length > 0) {
    problems.push(`its column(s) ${blocking.join(', ')} are NOT NULL without a default, and toolgate's inserts would not fill them (give each a default or allow NULL)`);
  }
  return problems;
}

/** Whether `column` alone is the key of a unique index (so foreign keys can reference it). */
export async function isUniqueKey(sequelize: Sequelize, table: string, column: string, transaction: Transaction): Promise<boolean> {
  const [rows] = (await sequelize.query(
    `SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
      WHERE i.indrelid = to_regclass(:table) AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL AND a.attname = :column`,
    { replacements: { table, column }, transaction },
  )) as [unknown[], unknown];
  return rows.length > 0;
}

/**
 * down() for a migration that creates or adopts `table`: a table it created goes whole; an adopted
 * one loses only what the migration added (its own indexes, then its marked columns).
 */
export async function undoAdoption(sequelize: Sequelize, table: string, ownIndexes: readonly string[], transaction: Transaction): Promise<void> {
  if ((await tableComment(sequelize, table, transaction)) === CREATED_MARK) {
    await sequelize.query(`DROP TABLE ${ident(table)}`, { transaction });
    return;
  }
  for (const index of ownIndexes) await sequelize.query(`DROP INDEX IF EXISTS ${ident(index)}`, { transaction });
  await dropAddedColumns(sequelize, table, transaction);
}

/**
 * For a later migration that gives a table (toolgate's own or an adopted legacy one) more columns:
 * adds each one the table lacks, marked, so that dropMarkedColumns() can take exactly those away.
 * A column the table already has (a legacy table's own) is left as it is.
 */
export async function addMarkedColumns(sequelize: Sequelize, table: string, columns: Record<string, string>, transaction: Transaction): Promise<void> {
  const have = new Set((await columnsOf(sequelize, table, transaction)).map((c) => c.name));
  for (const [name, ddl] of Object.entries(columns)) {
    if (have.has(name)) continue;
    await sequelize.query(`ALTER TABLE ${ident(table)} ADD COLUMN ${ident(name)} ${ddl}`, { transaction });
    await sequelize.query(`COMMENT ON COLUMN ${ident(table)}.${ident(name)} IS '${ADDED_MARK}'`, { transaction });
  }
}

/** down() of addMarkedColumns(): drops those of the named columns that carry the mark, and no other. */
export async function dropMarkedColumns(sequelize: Sequelize, table: string, names: readonly string[], transaction: Transaction): Promise<void> {
  for (const column of await columnsOf(sequelize, table, transaction)) {
    if (names.includes(column.name) && column.comment === ADDED_MARK) await sequelize.query(`ALTER TABLE ${ident(table)} DROP COLUMN ${ident(column.name)}`, { transaction });
  }
}

/** down() for an adopted table: drops the columns this project added, and nothing of the legacy table. */
export async function dropAddedColumns(sequelize: Sequelize, table: string, transaction: Transaction): Promise<string[]> {
  const dropped: string[] = [];
  for (const column of await columnsOf(sequelize, table, transaction)) {
    if (column.comment !== ADDED_MARK) continue;
    await sequelize.query(`ALTER TABLE ${ident(table)} DROP COLUMN ${ident(column.name)}`, { transaction });
    dropped.push(column.name);
  }
  return dropped;
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
