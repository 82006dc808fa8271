// What a test compares to prove "nothing changed": a fingerprint of every table's rows and
// sequences, and a snapshot of the legacy tables (columns, indexes, constraints, rows).
import { QueryTypes, type Sequelize } from 'sequelize';

const LEGACY_TABLES = ['agents', 'tasks', 'documents', 'tool_calls'];

/**
 * Every user table's rows and every sequence's position, as one comparable object. A rolled-back
 * transaction leaves its rows out but not the ids it drew (sequences are not transactional), so
 * rollback tests compare rows only.
 */
export async function fingerprint(sql: Sequelize, opts: { sequences?: boolean } = {}): Promise<Record<string, string>> {
  const tables = await sql.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`, {
    type: QueryTypes.SELECT,
  });
  const out: Record<string, string> = {};
  for (const { t } of tables) {
    const [row] = await sql.query<{ h: string | null }>(`SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) AS h FROM "${t}" x`, {
      type: QueryTypes.SELECT,
    });
    out[t] = row?.h ?? 'empty';
  }
  if (opts.sequences === false) return out;
  const sequences = await sql.query<{ s: string }>(
    `SELECT sequencename AS s FROM pg_sequences WHERE schemaname = current_schema() ORDER BY 1`,
    { type: QueryTypes.SELECT },
  );
  for (const { s } of sequences) {
    const [row] = await sql.query<{ v: string }>(`SELECT last_value || ':' || is_called AS v FROM "${s}"`, { type: QueryTypes.SELECT });
    out[`sequence ${s}`] = row!.v;
  }
  return out;
}

export interface LegacySnapshot {
  columns: Record<string, string[]>;
  indexes: string[];
  constraints: string[];
  rows: Record<string, string[]>;
}

/**
 * The legacy tables as the legacy application sees them. With `legacyOnly`, what toolgate added
 * (columns marked 'added by toolgate', indexes and constraints named toolgate_*) is left out.
 */
export async function legacySnapshot(sql: Sequelize, opts: { legacyOnly?: boolean; tables?: string[] } = {}): Promise<LegacySnapshot> {
  const tables = opts.tables ?? LEGACY_TABLES;
  const snapshot: LegacySnapshot = { columns: {}, indexes: [], constraints: [], rows: {} };
  for (const table of tables) {
    const columns = await sql.query<{ name: string; spec: string; added: boolean }>(
      `SELECT a.attname AS name,
              format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') AS spec,
              coalesce(col_description(a.attrelid, a.attnum) = 'added by toolgate', false) AS added
         FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = to_regclass(:table) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      { replacements: { table }, type: QueryTypes.SELECT },
    );
    const kept = columns.filter((c) => !(opts.legacyOnly && c.added));
    snapshot.columns[table] = kept.map((c) => `${c.name} ${c.spec}`);
    if (kept.length === 0) continue; // no such table
    const list = kept.map((c) => `"${c.name}"`).join(', ');
    const rows = await sql.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM (SELECT ${list} FROM "${table}" ORDER BY id) x`, {
      type: QueryTypes.SELECT,
    });
    snapshot.rows[table] = rows.map((r) => r.r);
  }
  const isToolgate = (name: string) => opts.legacyOnly && name.includes('toolgate');
  snapshot.indexes = (
    await sql.query<{ d: string; n: string }>(
      `SELECT indexname AS n, indexdef AS d FROM pg_indexes WHERE tablename IN (:tables) ORDER BY 1`,
      {
        replacements: { tables },
        type: QueryTypes.SELECT,
      },
    )
  )
    .filter((i) => !isToolgate(i.n))
    .map((i) => i.d);
  snapshot.constraints = (
    await sql.query<{ n: string; d: string }>(
      `SELECT conname AS n, conrelid::regclass || ': ' || pg_get_constraintdef(oid) AS d FROM pg_constraint
        WHERE conrelid IN (SELECT to_regclass(t) FROM unnest(ARRAY[:tables]::text[]) t)
          AND contype <> 'n' -- NOT NULL is in the column's spec (PostgreSQL 18 also lists it here)
        ORDER BY 1`,
      { replacements: { tables }, type: QueryTypes.SELECT },
    )
  )
    .filter((c) => !isToolgate(c.n))
    .map((c) => `${c.n} ${c.d}`);
  return snapshot;
}
