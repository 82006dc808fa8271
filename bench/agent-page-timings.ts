// The agents a page benchmark reads, and the dashboard's pages it times on them: shared by
// bench:pages and bench:100m, so that both fill the same agents and time the same pages.
import { performance } from 'node:perf_hooks';
import type { Sequelize } from 'sequelize';
import { encodeCursor } from '../src/core/page-cursor';
import { accessRulesByAgent, toolkitNamesByAgent } from '../src/app/dashboard/usage';
import { AGENTS_PER_PAGE } from '../src/app/dashboard/pages/agents';
import type { createToolgate } from '../src/toolgate';

type Toolgate = ReturnType<typeof createToolgate>;

export const RUNS = 7;

/** The median of RUNS after one warm-up, printed in ms. */
export async function median(run: () => Promise<unknown>): Promise<string> {
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

/**
 * `agents` agents, named in no order of their ids, the last one 'Zebra helpdesk'; an attachment
 * each (the first toolkit), and an access rule on one in ten. The system toolkits must be synced.
 */
export async function fillAgents(sequelize: Sequelize, agents: number): Promise<void> {
  await sequelize.query(`INSERT INTO agents (name) SELECT 'Agent ' || md5(n::text) FROM generate_series(1, ${agents - 1}) AS n`);
  await sequelize.query(`INSERT INTO agents (name) VALUES ('Zebra helpdesk')`);
  await sequelize.query(
    `INSERT INTO agent_toolkits (agent_id, toolkit_id, origin) SELECT a.id, (SELECT min(id) FROM toolkits), 'operator' FROM agents a`,
  );
  await sequelize.query(
    `INSERT INTO agent_access_rules (agent_id, kind, pattern) SELECT id, 'allow', '*@thescoop.com' FROM agents WHERE id % 10 = 0`,
  );
}

/** The agents pages, as the API and the dashboard read them, each with its name: the first, one halfway down, two searches. */
export async function agentPages(sequelize: Sequelize, tg: Toolgate, agents: number): Promise<[string, () => Promise<unknown>][]> {
  const [[middle]] = (await sequelize.query(
    `SELECT lower(name) COLLATE "C" AS sort_name, id FROM agents ORDER BY lower(name) COLLATE "C", id OFFSET ${Math.floor(agents / 2)} LIMIT 1`,
  )) as [{ sort_name: string; id: number }[], unknown];
  const deep = encodeCursor([middle!.sort_name, middle!.id]);
  const dashboardPage = async (after?: string) => {
    const page = await tg.agents.page({ limit: AGENTS_PER_PAGE, ...(after ? { after } : {}) });
    const ids = page.agents.map((a) => a.id);
    await Promise.all([toolkitNamesByAgent(sequelize, ids), accessRulesByAgent(sequelize, ids)]);
  };
  return [
    ['GET /agents, first page (100)', () => tg.agents.page({ limit: 100 })],
    ['GET /agents, a page halfway down (100)', () => tg.agents.page({ limit: 100, after: deep })],
    ['GET /agents?name=zebra (one agent of all)', () => tg.agents.page({ limit: 100, name: 'zebra' })],
    ['GET /agents?name=agent 0 (a sixteenth match), first page', () => tg.agents.page({ limit: 100, name: 'agent 0' })],
    ['Dashboard agents, first page (50, toolkits and rules)', () => dashboardPage()],
    ['Dashboard agents, a page halfway down', () => dashboardPage(deep)],
  ];
}
