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
import { pageToolCalls } from '../src/services/tool-calls';
import { createToolgate } from '../src/toolgate';
import { SCOOP_TOOLS } from '../src/app/demo/scoop-tools';
import { agentPages, fillAgents, median, RUNS } from './agent-page-timings';
import { withBenchDatabase } from './postgres-server';

const arg = process.argv.indexOf('--agents');
const AGENTS = arg > 0 ? Number(process.argv[arg + 1]) : 1_000_000;
const HISTORY = 20_000;
async function main(): Promise<void> {
  await withBenchDatabase('pages', async (url) => {
    const sequelize = createSequelize(url, { queryTimeoutMs: 0 });
    const tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, policyCache: 'listen' });
    try {
      await migrateUp(sequelize);
      await tg.syncSystemToolkits();
      const fill = performance.now();
      await fillAgents(sequelize, AGENTS);
      const [[busy]] = (await sequelize.query('SELECT min(id) AS id FROM agents')) as [{ id: number }[], unknown];
      await sequelize.query(
        `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms)
         SELECT ${busy!.id}, 'process_refund', 'process_refund', CASE WHEN n % 4 = 0 THEN 'denied' ELSE 'success' END, 'sender', 'jane@acme.com', 1
           FROM generate_series(1, ${HISTORY}) AS n`,
      );
      await sequelize.query('VACUUM ANALYZE');
      const filled = ((performance.now() - fill) / 1000).toFixed(1);

      const [[oldId]] = (await sequelize.query(
        `SELECT id FROM tool_calls WHERE agent_id = ${busy!.id} ORDER BY id DESC OFFSET ${HISTORY / 2} LIMIT 1`,
      )) as [{ id: string }[], unknown];
      const olderCalls = encodeCursor([Number(oldId!.id)]);

      const rows: [string, () => Promise<unknown>][] = [
        ...(await agentPages(sequelize, tg, AGENTS)),
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
