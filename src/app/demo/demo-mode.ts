// Whether The Scoop's demo belongs on a database (TOOLGATE_DEMO). It is for a fresh embedded cluster
// only: a database someone else's data lives in never gets its agents, tables or tools unless asked.
import { QueryTypes, type Sequelize } from 'sequelize';

export const DEMO_SETTINGS = ['auto', 'on', 'off'] as const;
export type DemoSetting = (typeof DEMO_SETTINGS)[number];

/** The demo seeder whose record in SequelizeData says the demo was seeded on a database. */
const DEMO_SEEDER = '20261130000001-the-scoop';

export interface DemoDecision {
  /** The demo's tools are registered, and its seeders run (each once per database). */
  active: boolean;
  /** Why, as a sentence an operator reads in the start log. */
  reason: string;
}

export interface DemoContext {
  setting: DemoSetting;
  /** The database is the embedded cluster under the data folder (no DATABASE_URL). */
  embedded: boolean;
  /**
   * The caller seeds the demo when the decision is active (the service, toolkits:sync). The migration
   * CLIs do not, so a fresh database is not theirs to start the demo on.
   */
  seeds: boolean;
}

/** Decides before any migration runs: a database the migrations already touched is no longer fresh. */
export async function decideDemo(sequelize: Sequelize, context: DemoContext): Promise<DemoDecision> {
  if (context.setting === 'on') return { active: true, reason: 'TOOLGATE_DEMO=on' };
  if (context.setting === 'off') return { active: false, reason: 'TOOLGATE_DEMO=off' };
  if (!context.embedded) {
    return {
      active: false,
      reason:
        'the database is named by DATABASE_URL; the demo is seeded only on a fresh embedded database (TOOLGATE_DEMO=on seeds it anyway)',
    };
  }
  if (await demoSeededBefore(sequelize))
    return { active: true, reason: 'the demo was seeded on this embedded database before (TOOLGATE_DEMO=off leaves it out)' };
  if (await holdsTables(sequelize)) {
    return {
      active: false,
      reason:
        'the embedded database held data before this start; the demo is seeded only on a fresh one (TOOLGATE_DEMO=on seeds it anyway)',
    };
  }
  return context.seeds
    ? { active: true, reason: 'the embedded database is fresh (TOOLGATE_DEMO=off leaves the demo out)' }
    : { active: false, reason: 'the embedded database is fresh; npm start seeds the demo there' };
}

async function demoSeededBefore(sequelize: Sequelize): Promise<boolean> {
  const [row] = await sequelize.query<{ seeded: boolean }>(`SELECT to_regclass('"SequelizeData"') IS NOT NULL AS seeded`, {
    type: QueryTypes.SELECT,
  });
  if (!row?.seeded) return false;
  // Any spelling of the seeder's name (.ts from tsx and sequelize-cli, .js from dist).
  const found = await sequelize.query(`SELECT 1 FROM "SequelizeData" WHERE name LIKE :prefix LIMIT 1`, {
    replacements: { prefix: `${DEMO_SEEDER}.%` },
    type: QueryTypes.SELECT,
  });
  return found.length > 0;
}

/** Any table, view, sequence or other relation outside PostgreSQL's own schemas. */
async function holdsTables(sequelize: Sequelize): Promise<boolean> {
  const [row] = await sequelize.query<{ held: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
          AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%') AS held`,
    { type: QueryTypes.SELECT },
  );
  return row?.held === true;
}
