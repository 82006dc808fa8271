// sequelize-cli's database config (named by .sequelizerc): DATABASE_URL, whatever the environment.
if (!process.env.DATABASE_URL) {
  throw new Error('DATABASE_URL is not set; sequelize-cli needs it, e.g. DATABASE_URL=postgres://user:password@127.0.0.1:5432/toolgate');
}

// Seeders run once: recorded in SequelizeData, as the service's own seeder runner (src/db/migrate.ts) does.
module.exports = { use_env_variable: 'DATABASE_URL', dialect: 'postgres', seederStorage: 'sequelize' };
