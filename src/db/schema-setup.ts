// What the migrator does around the migrations when toolgate has a schema of its own: makes the
// schema before the first one, and afterwards pins the search_path of every toolgate function in it.
//
// A trigger's function resolves the tables it names by the search_path of the session that fired
// it: the host's own SQL on a toolgate table (an UPDATE of agents from a psql session, with
// search_path public) would find no agent_policy_versions, or another's. Pinned, each function
// finds toolgate's tables however it is called. Pinned after every run, up or down, because a
// migration's CREATE OR REPLACE FUNCTION resets what the function was set to.
import { QueryTypes, type Sequelize } from 'sequelize';
import { quoteIdent } from './quote-ident';

export async function createSchema(sequelize: Sequelize, schema: string): Promise<void> {
  await sequelize.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
}

/**
 * Sets `search_path` on each function of the schema, except an extension's (pgvector's, when it was
 * created there) and an immutable one, which reads no table by definition (toolgate_dot: a SET
 * clause would cost a setting saved and restored on each of the million calls an exact search makes).
 */
export async function pinFunctions(sequelize: Sequelize, schema: string): Promise<void> {
  const functions = await sequelize.query<{ fn: string }>(
    `SELECT format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS fn
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = :schema AND p.prokind = 'f' AND p.provolatile <> 'i'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
      ORDER BY 1`,
    { replacements: { schema }, type: QueryTypes.SELECT },
  );
  for (const { fn } of functions) await sequelize.query(`ALTER FUNCTION ${fn} SET search_path = ${quoteIdent(schema)}`);
}

/** Drops the schema once nothing is left in it; says whether it did. */
export async function dropSchemaIfEmpty(sequelize: Sequelize, schema: string): Promise<'dropped' | 'kept' | 'absent'> {
  const [row] = await sequelize.query<{ present: boolean }>('SELECT to_regnamespace(:quoted) IS NOT NULL AS present', {
    replacements: { quoted: quoteIdent(schema) },
    type: QueryTypes.SELECT,
  });
  if (!row?.present) return 'absent';
  try {
    await sequelize.query(`DROP SCHEMA ${quoteIdent(schema)} RESTRICT`);
    return 'dropped';
  } catch (err) {
    // 2BP01: something is still in it (a table of the host's, the demo's seeder records).
    if ((err as { parent?: { code?: string } }).parent?.code === '2BP01') return 'kept';
    throw err;
  }
}
