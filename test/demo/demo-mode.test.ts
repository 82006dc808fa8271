// TOOLGATE_DEMO's rule: the demo belongs to a fresh embedded database (and stays where it was seeded);
// a database named by DATABASE_URL, or one that held data, gets it only with TOOLGATE_DEMO=on.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readConfig } from '../../src/app/config';
import { seedUp } from '../../src/db/migrate';
import { decideDemo, type DemoSetting } from '../../src/app/demo/demo-mode';
import { buildLegacyDatabase } from '../legacy/fixtures/legacy-database';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database';
import { shellEnv, startService, type RunningService } from '../support/service-process';

jest.setTimeout(90_000);

const ADMIN_TOKEN = 'demo-admin-token-0123456789';

let empty: TestDatabase;
let legacy: TestDatabase;
let seeded: TestDatabase;

beforeAll(async () => {
  [empty, legacy, seeded] = await Promise.all([createEmptyDatabase(), createEmptyDatabase(), createTestDatabase()]);
  await buildLegacyDatabase(legacy.sequelize);
  await seedUp(seeded.sequelize);
});

afterAll(() => Promise.all([empty, legacy, seeded].map((db) => db?.drop())));

const decide = (db: TestDatabase, setting: DemoSetting, embedded: boolean, seeds = true) =>
  decideDemo(db.sequelize, { setting, embedded, seeds });

describe('when TOOLGATE_DEMO is auto (the default)', () => {
  test('then readConfig defaults to auto and accepts only auto, on and off', () => {
    expect(readConfig({}).demo).toBe('auto');
    expect(readConfig({ TOOLGATE_DEMO: 'on' }).demo).toBe('on');
    expect(() => readConfig({ TOOLGATE_DEMO: 'yes' })).toThrow('TOOLGATE_DEMO');
  });

  test('then a database named by DATABASE_URL gets no demo, even an empty one, and the reason says so', async () => {
    const decision = await decide(empty, 'auto', false);
    expect(decision.active).toBe(false);
    expect(decision.reason).toContain('DATABASE_URL');
  });

  test('then a fresh embedded database gets the demo when the service starts', async () => {
    expect(await decide(empty, 'auto', true)).toMatchObject({ active: true });
  });

  test('then a migration CLI on a fresh embedded database registers no demo tool (it seeds nothing)', async () => {
    expect(await decide(empty, 'auto', true, false)).toMatchObject({ active: false });
  });

  test('then an embedded database that held legacy agents gets no demo', async () => {
    const decision = await decide(legacy, 'auto', true);
    expect(decision.active).toBe(false);
    expect(decision.reason).toContain('held data');
  });

  test('then an embedded database where the demo was seeded keeps it, for the service and the CLIs alike', async () => {
    expect(await decide(seeded, 'auto', true)).toMatchObject({ active: true });
    expect(await decide(seeded, 'auto', true, false)).toMatchObject({ active: true });
  });
});

describe('when TOOLGATE_DEMO is set', () => {
  test('then on puts the demo on any database, and off leaves it out even where it was seeded', async () => {
    expect(await decide(legacy, 'on', false)).toMatchObject({ active: true, reason: 'TOOLGATE_DEMO=on' });
    expect(await decide(seeded, 'off', true)).toMatchObject({ active: false, reason: 'TOOLGATE_DEMO=off' });
  });
});

describe('when npm start runs twice on a fresh embedded cluster', () => {
  let dataDir: string;
  let service: RunningService | undefined;
  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-demo-'));
  });
  afterAll(async () => {
    service?.kill();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** `npm start`'s own process (tsx src/app/server.ts), without DATABASE_URL: the embedded cluster under dataDir. */
  async function start(): Promise<RunningService> {
    service = await startService({ env: { ...shellEnv(), TOOLGATE_DATA_DIR: dataDir, TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
    return service;
  }

  test('then the first start seeds The Scoop and registers its tools, and the second keeps both', async () => {
    for (const why of ['demo on: the embedded database is fresh', 'demo on: the demo was seeded on this embedded database before']) {
      const s = await start();
      try {
        expect(s.output()).toContain(why);
        const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
        const tools = (await (await fetch(`${s.url}/api/tools`, { headers: auth })).json()) as { id: string }[];
        expect(tools.map((t) => t.id)).toEqual(
          expect.arrayContaining(['lookup_order', 'check_flavor_stock', 'process_refund', 'send_email']),
        );
        const agents = (await (await fetch(`${s.url}/api/agents`, { headers: auth })).json()) as { name: string }[];
        expect(agents.map((a) => a.name).sort()).toEqual(['Scout', 'Sundae']);
        // The ids the README's scenario names: the system toolkits first (Default Tools is 2), then the demo's.
        const toolkits = (await (await fetch(`${s.url}/api/toolkits`, { headers: auth })).json()) as { id: number; name: string }[];
        expect(toolkits.map((t) => [t.id, t.name])).toEqual([
          [1, 'All Tools'],
          [2, 'Default Tools'],
          [3, 'Support'],
          [4, 'Finance'],
          [5, 'Operations'],
        ]);
      } finally {
        // The embedded cluster's own exit hook used to race the drain: exit 143, and no `stopped`.
        const stopped = await s.stop();
        expect({ code: stopped.code, last: JSON.parse(stopped.lines.at(-1) ?? '{}').msg }).toEqual({ code: 0, last: 'stopped' });
      }
    }
  });
});
