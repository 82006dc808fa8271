// What the migration CLIs open: the service's database (DATABASE_URL, or the embedded cluster under
// the data folder) and the service's tool manifest, without applying any schema migration (a dry
// run must change nothing; the deploy path applies them itself). It loads what the commands need
// and no more (src/app/open-database.ts): a command's start is part of every deploy.
import type { Sequelize } from 'sequelize';
import { openDatabase } from '../open-database';
import { readConfig, type ServiceConfig } from '../config';
import type { ToolManifest } from '../../core/tool-manifest';
import { ToolRegistry } from '../../tools/tool-registry';

export interface CliDatabase {
  sequelize: Sequelize;
  /** The manifest `npm start` serves: the builtins, plus the demo tools only where the demo is active (src/app/demo/demo-mode.ts). */
  manifest: ToolManifest;
  /** The service's settings, as the environment gives them. */
  config: ServiceConfig;
  close(): Promise<void>;
}

export async function openCliDatabase(): Promise<CliDatabase> {
  // An operator's batch over every agent: no request is waiting, so no per-query time limit.
  const config = readConfig();
  const { sequelize, demo, close } = await openDatabase(config, { queryTimeoutMs: 0, seeds: false });
  // The demo's tools (and what they load) only where the demo is active: never on a DATABASE_URL
  // database unless TOOLGATE_DEMO=on.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const demoTools = demo.active ? (require('../demo/scoop-tools') as typeof import('../demo/scoop-tools')).SCOOP_TOOLS : [];
  return { sequelize, manifest: new ToolRegistry(demoTools).manifest, config, close };
}
