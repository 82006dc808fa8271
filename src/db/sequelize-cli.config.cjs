// sequelize-cli's database config (named by .sequelizerc): DATABASE_URL, whatever the environment.
if (!process.env.DATABASE_URL) {
  throw new Error('DATABASE_URL is not set; sequelize-cli needs it, e.g. DATABASE_URL=postgres://user:password@127.0.0.1:5432/toolgate');
}

// TOOLGATE_DB_SCHEMA: the connections search toolgate's schema alone, as the service's do
// (src/db/schema.ts, loaded through tsx, which .sequelizerc registers). sequelize-cli does not make
// the schema, nor pin its functions' search_path: npm run migrate does both.
const schema = process.env.TOOLGATE_DB_SCHEMA?.trim();
const { checkSchemaName, inSchema } = require('./schema.ts');
const dialectOptions = schema ? inSchema({}, checkSchemaName(schema, 'TOOLGATE_DB_SCHEMA')) : {};

// Seeders run once: recorded in SequelizeData, as the service's own seeder runner (src/db/migrate.ts) does.
module.exports = { use_env_variable: 'DATABASE_URL', dialect: 'postgres', seederStorage: 'sequelize', dialectOptions };
