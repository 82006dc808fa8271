// toolgate in a PostgreSQL schema of its own (createToolgate({ schema }), TOOLGATE_DB_SCHEMA): every
// table, function, trigger and bookkeeping table of toolgate's there, none in the host's.
//
// toolgate's SQL names its tables bare, so the schema is chosen per connection: each connection
// toolgate opens starts with `search_path=<schema>` (libpq's `options` startup parameter, which
// node-postgres sends and Sequelize passes on from dialectOptions), and the schema alone. Not
// `<schema>, public`: a table missing from toolgate's schema (before the first migration, after an
// undo) would then be found in public, the host's, and read, written or adopted there.
//
// The same startup options set `toolgate.schema=<schema>`, a setting of toolgate's own that the
// migrations and the lock keys read in SQL: a connection says by itself which toolgate it is for,
// so that two toolgates in two schemas of one database never share a lock or a notification
// channel, whichever of toolgate's code (or sequelize-cli) opened it.
import { Sequelize, type Options } from 'sequelize';
import { ToolgateConfigError } from '../errors';

/** Lowercase, so that it needs no quoting anywhere; 47 characters at most, so that its channel name fits PostgreSQL's 63. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,46}$/;
const RESERVED = /^(pg_.*|information_schema|public)$/;

/** The schema toolgate is told to use (a name as SCHEMA_NAME allows), or a ToolgateConfigError naming where it was given. */
export function checkSchemaName(given: unknown, where: string): string {
  if (typeof given === 'string' && SCHEMA_NAME.test(given) && !RESERVED.test(given)) return given;
  const why =
    given === 'public'
      ? 'public is where toolgate goes without a schema: leave the schema out, or name one of its own'
      : typeof given === 'string' && RESERVED.test(given)
        ? "names starting with pg_, and information_schema, are PostgreSQL's own"
        : 'give lowercase letters, digits and _, starting with a letter or _, at most 47 characters';
  throw new ToolgateConfigError(
    'ERR_TOOLGATE_DB_SCHEMA',
    `${where} ${JSON.stringify(given)} is not a schema toolgate can keep its tables in: ${why}, such as "toolgate".`,
  );
}

/** The SQL of the setting a connection names its toolgate's schema by ('' without one). */
export const SCHEMA_SETTING_SQL = "coalesce(current_setting('toolgate.schema', true), '')";

/**
 * An advisory lock key for `purpose` of the connection's toolgate: the key it always had without a
 * schema (`defaultKey`, so older instances on the same database still take turns with this one),
 * one of the schema's own with one.
 */
export function lockKeySql(purpose: string, defaultKey: string): string {
  return `(CASE WHEN ${SCHEMA_SETTING_SQL} = '' THEN CAST(${defaultKey} AS bigint) ELSE hashtextextended('${purpose}:' || ${SCHEMA_SETTING_SQL}, 0) END)`;
}

/** A name that keys a lock (hashtext(...)): the name itself without a schema, the name and the schema with one. */
export function scopedNameSql(name: string): string {
  return `('${name}' || CASE WHEN ${SCHEMA_SETTING_SQL} = '' THEN '' ELSE ':' || ${SCHEMA_SETTING_SQL} END)`;
}

/** The channel the policy triggers NOTIFY and the listeners LISTEN on (migrations 21 and 20261203000001 say the same). */
export function policyChannel(schema: string | null): string {
  return schema === null ? 'toolgate_policy' : `toolgate_policy_${schema}`;
}

type DialectOptions = Record<string, unknown>;

/** dialectOptions whose connections start in `schema`, and say so. */
export function inSchema(dialectOptions: DialectOptions, schema: string): DialectOptions {
  const given = typeof dialectOptions.options === 'string' ? dialectOptions.options.trim() : '';
  const own = `-c search_path=${schema} -c toolgate.schema=${schema}`;
  return { ...dialectOptions, options: given ? `${given} ${own}` : own };
}

/** The schema a Sequelize's connections start in, when toolgate set it (createSequelize's `schema`, or a toolgate's own pool). */
export function schemaOf(sequelize: Sequelize): string | null {
  const options = (sequelize.config as { dialectOptions?: DialectOptions }).dialectOptions?.options;
  if (typeof options !== 'string') return null;
  const settings = [...options.matchAll(/-c\s+toolgate\.schema=(\S+)/g)];
  return settings.length > 0 ? settings[settings.length - 1]![1]! : null;
}

/**
 * A Sequelize on the host's database whose connections start in `schema`: the host's own, when it
 * already does (createSequelize(url, { schema })), else a pool of toolgate's own, made from the
 * host's settings (server, credentials, driver, pool sizes, logging, time zone, dialectOptions).
 * The host's Sequelize is left as it is: its queries keep their own search_path.
 */
export function sequelizeInSchema(host: Sequelize, schema: string): Sequelize {
  if (schemaOf(host) === schema) return host;
  const c = host.config as Sequelize['config'] & { dialectOptions?: DialectOptions };
  const o = (host as unknown as { options: Options }).options;
  return new Sequelize(c.database, c.username, c.password ?? undefined, {
    dialect: 'postgres',
    dialectModule: o.dialectModule,
    host: c.host,
    port: c.port ? Number(c.port) : undefined,
    logging: o.logging,
    timezone: o.timezone,
    pool: o.pool,
    dialectOptions: inSchema(c.dialectOptions ?? {}, schema),
  });
}
