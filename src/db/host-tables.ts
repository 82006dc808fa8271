// Before a migration creates or adopts a table, whether the database already holds one of that
// name that toolgate did not make: a host's own `tasks` must never gain toolgate's columns, foreign
// keys and indexes unasked. Checked for every pending migration at once, before the first runs, so
// a refusal leaves the database as it was.
import { QueryTypes, type Sequelize } from 'sequelize';
import { CREATED_MARK } from '../../migrations/lib/adopt-table';
import { ToolgateConfigError } from '../errors';
import type { ToolgateTable } from './toolgate-tables';

/**
 * Throws HostTablesError when a table these migrations would make already exists and is not
 * toolgate's (a table toolgate created carries the comment 'created by toolgate'). The legacy
 * application's tables pass when adoptLegacyTables says to adopt them.
 */
export async function refuseHostTables(
  sequelize: Sequelize,
  tables: readonly ToolgateTable[],
  options: { adoptLegacyTables: boolean },
): Promise<void> {
  if (tables.length === 0) return;
  // Resolved as the migrations resolve them: by the connection's search_path.
  const taken = await sequelize.query<{ name: string }>(
    `SELECT t.name FROM unnest(ARRAY[:names]::text[]) AS t(name)
       JOIN pg_class c ON c.oid = to_regclass(quote_ident(t.name))
      WHERE obj_description(c.oid, 'pg_class') IS DISTINCT FROM :mark
      ORDER BY t.name`,
    { replacements: { names: tables.map((t) => t.name), mark: CREATED_MARK }, type: QueryTypes.SELECT },
  );
  const names = new Set(taken.map((t) => t.name));
  const refused = tables.filter((t) => names.has(t.name) && !(t.adoptable && options.adoptLegacyTables));
  if (refused.length === 0) return;
  throw new HostTablesError(
    refused.filter((t) => t.adoptable).map((t) => t.name),
    refused.filter((t) => !t.adoptable).map((t) => t.name),
  );
}

const tablesNamed = (tables: readonly string[]) =>
  `${tables.length === 1 ? 'a table' : 'tables'} named ${tables.map((t) => `"${t}"`).join(', ')}`;

/**
 * tg.migrate() (npm run migrate, the service's start) found tables of the names its migrations would
 * create that toolgate did not create: the legacy application's, which it adopts only when asked,
 * or others, which it never touches. Nothing was changed.
 */
export class HostTablesError extends ToolgateConfigError {
  /** Every table refused, in name order: first those toolgate may adopt, then the others. */
  readonly tables: readonly string[];
  constructor(
    readonly adoptable: readonly string[],
    readonly foreign: readonly string[],
  ) {
    const sentences = ['toolgate did not migrate this database: nothing was changed.'];
    if (adoptable.length > 0) {
      const [it, they] = adoptable.length === 1 ? ['it', 'it is'] : ['them', 'they are'];
      sentences.push(
        `It already holds ${tablesNamed(adoptable)}, which toolgate did not create and would adopt: add its columns, foreign keys and indexes to ${it}.`,
        `If ${they} the legacy application's (docs/MIGRATING.md), adopt ${it} with adoptLegacyTables: true (npm run migrate -- --adopt-legacy-tables; TOOLGATE_ADOPT_LEGACY_TABLES=on for the service).`,
      );
    }
    if (foreign.length > 0) {
      sentences.push(`It already holds ${tablesNamed(foreign)}, which toolgate did not create and would create itself.`);
    }
    sentences.push(
      "To keep toolgate's tables apart from your own, give toolgate a schema of its own: schema: 'toolgate' (TOOLGATE_DB_SCHEMA=toolgate for the service and its commands).",
    );
    super('ERR_TOOLGATE_HOST_TABLES', sentences.join(' '));
    this.tables = [...adoptable, ...foreign];
  }
}
