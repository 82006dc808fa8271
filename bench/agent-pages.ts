// `npm run bench:pages`: the agents list and the tool-call records a page at a time, on a large
// table. Fills agents (names in no order of their ids), an attachment each, access rules on one in
// ten, and one agent's long history of tool calls; then times, through the services the API and the
// dashboard call, the first page, a page deep in the list, a search for one agent among all, a
// search a sixteenth of them match, and the dashboard's page of agents with their toolkits and rules.
// Prints figures (the median of 7 after one warm-up); never passes or fails. `-- --agents N`
// (default 1,000,000) picks the size. Runs on a throwaway embedded PostgreSQL, or DATABASE_URL's.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createSequelize } from '../src/db/connect';
import { migrateUp } from '../src/db/migrate';
import { encodeCursor } from '../src/core/page-cursor';
import { accessRulesByAgent, toolkitNamesByAgent } from '../src/service/dashboard/usage';
import { AGENTS_PER_PAGE } from '../src/service/dashboard/pages/agents';
import { pageToolCalls } from '../src/services/tool-calls';
import { createToolgate } from '../src/toolgate';
import { SCOOP_TOOLS } from '../src/service/demo/scoop-tools';
import { withBenchDatabase } from './postgres-server';

const arg = process.argv.indexOf('--agents');
const AGENTS = arg > 0 ? Number(process.argv[arg + 1]) : 1_000_000;
const HISTORY = 20_000;
const RUNS = 7;

async function median(run: () => Promise<unknown>): Promise<string> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return `${times[Math.floor(RUNS / 2)]!.toFixed(2)} ms`;
}

async function main(): Promise<void> {
  await withBenchDatabase('pages', async (url) => {
    const sequelize = createSequelize(url, { queryTimeoutMs: 0 });
    const tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, policyCache: 'listen' });
    try {
      await migrateUp(sequelize);
      await tg.syncSystemToolkits();
      const fill = performance.now();
      await sequelize.query(`INSERT INTO agents (name) SELECT 'Agent ' || md5(n::text) FROM generate_series(1, ${AGENTS - 1}) AS n`);
      await sequelize.query(`INSERT INTO agents (name) VALUES ('Zebra helpdesk')`);
      await sequelize.query(
        `INSERT INTO agent_toolkits (agent_id, toolkit_id, origin) SELECT a.id, (SELECT min(id) FROM toolkits), 'operator' FROM agents a`,
      );
      await sequelize.query(
        `INSERT INTO agent_access_rules (agent_id, kind, pattern) SELECT id, 'allow', '*@thescoop.com' FROM agents WHERE id % 10 = 0`,
      );
      const [[busy]] = (await sequelize.query('SELECT min(id) AS id FROM agents')) as [{ id: number }[], unknown];
      await sequelize.query(
        `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms)
         SELECT ${busy!.id}, 'process_refund', 'process_refund', CASE WHEN n % 4 = 0 THEN 'denied' ELSE 'success' END, 'sender', 'jane@acme.com', 1
           FROM generate_series(1, ${HISTORY}) AS n`,
      );
      await sequelize.query('VACUUM ANALYZE');
      const filled = ((performance.now() - fill) / 1000).toFixed(1);

      const [[middle]] = (await sequelize.query(
        `SELECT lower(name) COLLATE "C" AS sort_name, id FROM agents ORDER BY lower(name) COLLATE "C", id OFFSET ${Math.floor(AGENTS / 2)} LIMIT 1`,
      )) as [{ sort_name: string; id: number }[], unknown];
      const deep = encodeCursor([middle!.sort_name, middle!.id]);
      const [[oldId]] = (await sequelize.query(
        `SELECT id FROM tool_calls WHERE agent_id = ${busy!.id} ORDER BY id DESC OFFSET ${HISTORY / 2} LIMIT 1`,
      )) as [{ id: string }[], unknown];
      const olderCalls = encodeCursor([Number(oldId!.id)]);

      const dashboardPage = async (after?: string) => {
        const page = await tg.agents.page({ limit: AGENTS_PER_PAGE, ...(after ? { after } : {}) });
        const ids = page.agents.map((a) => a.id);
        await Promise.all([toolkitNamesByAgent(sequelize, ids), accessRulesByAgent(sequelize, ids)]);
      };
      const rows: [string, () => Promise<unknown>][] = [
        ['GET /agents, first page (100)', () => tg.agents.page({ limit: 100 })],
        ['GET /agents, a page halfway down (100)', () => tg.agents.page({ limit: 100, after: deep })],
        ['GET /agents?name=zebra (one agent of all)', () => tg.agents.page({ limit: 100, name: 'zebra' })],
        ['GET /agents?name=agent 0 (a sixteenth match), first page', () => tg.agents.page({ limit: 100, name: 'agent 0' })],
        ['Dashboard agents, first page (50, toolkits and rules)', () => dashboardPage()],
        ['Dashboard agents, a page halfway down', () => dashboardPage(deep)],
        [`GET /agents/:id/tool-calls, newest 100 of ${HISTORY}`, () => pageToolCalls(sequelize, busy!.id, { limit: 100 })],
        [`GET /agents/:id/tool-calls, 100 halfway down`, () => pageToolCalls(sequelize, busy!.id, { limit: 100, after: olderCalls })],
        [
          `GET /agents/:id/tool-calls?status=denied, 100 halfway down`,
          () => pageToolCalls(sequelize, busy!.id, { limit: 100, status: 'denied', after: olderCalls }),
        ],
      ];
      const [[version]] = (await sequelize.query("SELECT current_setting('server_version') AS server_version")) as [
        { server_version: string }[],
        unknown,
      ];
      console.log(
        `Pages at ${AGENTS.toLocaleString('en')} agents (one attachment each, ${HISTORY.toLocaleString('en')} tool calls for one), PostgreSQL ${version!.server_version}, ${os.cpus().length} cores, filled in ${filled} s; median of ${RUNS}`,
      );
      for (const [name, run] of rows) console.log(`  ${name.padEnd(62)} ${(await median(run)).padStart(10)}`);
      console.log(
        `  load average: ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
    } finally {
      await tg.close();
      await sequelize.close();
    }
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
