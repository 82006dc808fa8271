// The service as `npm start` runs it (migrations, system toolkits, The Scoop's demo, the dashboard),
// on a fresh test database, listening on a free loopback port.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app/app';
import { seedUp } from '../../src/db/migrate';
import { ensureScoopData } from '../../src/app/demo/scoop-data';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { createLogger } from '../../src/app/logger';
import { createToolgate, type Toolgate, type ToolgateOptions } from '../../src/toolgate';
import { ADMIN_TOKEN } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';

export interface RunningService {
  url: string;
  tg: Toolgate;
  db: TestDatabase;
  close(): Promise<void>;
}

/** `options`: more of the toolgate's options (its MCP servers, say). */
export async function startService(options: Partial<ToolgateOptions> = {}): Promise<RunningService> {
  const db = await createTestDatabase();
  // As the service without TOOLGATE_CLIENT_TOKENS: the client routes open, on purpose.
  const tg = createToolgate({ sequelize: db.sequelize, tools: SCOOP_TOOLS, adminToken: ADMIN_TOKEN, clientRoutes: 'open', ...options });
  await ensureScoopData(db.sequelize);
  await tg.syncSystemToolkits();
  await seedUp(db.sequelize);
  const app = createApp(tg, { logger: createLogger(false), dashboard: { adminToken: ADMIN_TOKEN } });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tg,
    db,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await tg.close();
      await db.drop();
    },
  };
}
