// What a preview of a policy change costs (SEMANTICS §15): POST /policy/preview's service over a
// window of N recorded calls of one agent from 1,000 distinct senders, for N = 10,000 and 100,000,
// with as many records again outside what the preview reads (older than the window, or another
// agent's), so that what is timed grows with the window's traffic, not with the table. For each N
// and each change: the median and the slowest of 5 previews, and the longest the event loop was
// held during them. Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { QueryTypes, type Sequelize } from 'sequelize';
import { senderAsGiven } from '../middleware/sender-check';
import { applyChange } from '../src/core/policy-change';
import { compilePolicy } from '../src/core/policy-index';
import { PolicyPreview } from '../src/core/policy-preview';
import type { AgentPolicyData } from '../src/core/types';
import { createSequelize } from '../src/db/connect';
import { SCOOP_TOOLS } from '../src/service/demo/scoop-tools';
import type { PreviewInput } from '../src/services/policy-preview';
import { createToolgate, internalsOf } from '../src/toolgate';
import { withBenchDatabase } from './postgres-server';

const SIZES = [10_000, 100_000];
const SENDERS = 1_000;
const ROUNDS = 5;
const CHUNK = 10_000;

async function setUp(sequelize: Sequelize): Promise<{ agent: number; other: number; finance: number; toolkit: number }> {
  const one = async (sql: string) => (await sequelize.query<{ id: number }>(sql, { type: QueryTypes.SELECT }))[0]!.id;
  const support = await one(
    `INSERT INTO toolkits (name, member_tool_ids) VALUES ('Support', ARRAY['lookup_order', 'check_flavor_stock']) RETURNING id`,
  );
  const toolkit = await one(`INSERT INTO toolkits (name, member_tool_ids) VALUES ('Finance', ARRAY['process_refund']) RETURNING id`);
  const agent = await one(`INSERT INTO agents (name) VALUES ('Sundae') RETURNING id`);
  const other = await one(`INSERT INTO agents (name) VALUES ('Scout') RETURNING id`);
  await sequelize.query(`INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (${agent}, ${support}), (${other}, ${support})`);
  const finance = await one(`INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (${agent}, ${toolkit}) RETURNING id`);
  await sequelize.query(`INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (${finance}, 'allow', '*@thescoop.com')`);
  return { agent, other, finance, toolkit };
}

/** N calls of the agent in the window, one sender in ten at the shop; and N outside it (older, or the other agent's). */
async function record(sequelize: Sequelize, ids: { agent: number; other: number }, n: number): Promise<void> {
  await sequelize.query('TRUNCATE tool_calls');
  const calls = (agent: number, age: string, from: number) => `
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, dispatch, run_key, created_at)
    SELECT ${agent}, tool, tool, CASE WHEN tool = 'process_refund' AND i % 10 <> 0 THEN 'denied' ELSE 'success' END, 'sender',
           CASE WHEN i % 10 = 0 THEN 'staff' || (i % ${SENDERS}) || '@thescoop.com' ELSE 'sender' || (i % ${SENDERS}) || '@example.com' END,
           1, 'call', gen_random_uuid(), now() - ${age} + i * interval '1 millisecond'
      FROM generate_series(${from}, ${from + CHUNK - 1}) AS i,
           LATERAL (SELECT (ARRAY['lookup_order', 'check_flavor_stock', 'process_refund'])[1 + i % 3] AS tool) AS t`;
  // In chunks: one statement of 100,000 rows would outlast the pool's statement timeout on a busy machine.
  for (let from = 1; from <= n; from += CHUNK) {
    await sequelize.query(calls(ids.agent, "interval '6 days'", from));
    await sequelize.query(calls(ids.agent, "interval '30 days'", from));
    await sequelize.query(calls(ids.other, "interval '6 days'", from));
  }
  await sequelize.query('ANALYZE tool_calls');
}

/** The median and slowest wall time, the CPU this process spent a preview (median), and the longest the event loop waited. */
async function timed(run: () => Promise<unknown>): Promise<{ median: number; max: number; cpu: number; loop: number; answer: unknown }> {
  const times: number[] = [];
  const cpu: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let answer: unknown;
  loop.enable();
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    const used = process.cpuUsage();
    answer = await run();
    const spent = process.cpuUsage(used);
    cpu.push((spent.user + spent.system) / 1000);
    times.push(performance.now() - started);
  }
  loop.disable();
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { median: times[Math.floor(ROUNDS / 2)]!, max: times.at(-1)!, cpu: cpu[Math.floor(ROUNDS / 2)]!, loop: loop.max / 1e6, answer };
}

/** The pure core alone: n calls from the senders replayed on two compiled policies, no database. */
function coreOnly(n: number): number {
  const live = new Set(SCOOP_TOOLS.map((tool) => tool.id));
  const data: AgentPolicyData = {
    agent_id: 1,
    attachments: [
      {
        attachment_id: 1,
        toolkit_id: 1,
        toolkit_name: 'Support',
        allow_proactive: false,
        member_tool_ids: ['lookup_order', 'check_flavor_stock'],
        rules: [],
      },
      {
        attachment_id: 2,
        toolkit_id: 2,
        toolkit_name: 'Finance',
        allow_proactive: false,
        member_tool_ids: ['process_refund'],
        rules: [{ id: 1, kind: 'allow', pattern: '*@thescoop.com' }],
      },
    ],
  };
  const candidate = applyChange(data, {
    kind: 'update',
    agent_id: 1,
    attachment_id: 2,
    terms: { rules: [], caps: [{ tool_id: null, per: 'sender', limit: 1, window_s: 86_400 }] },
  });
  const started = performance.now();
  const preview = new PolicyPreview(new Map([[1, { current: compilePolicy(data, live), candidate: compilePolicy(candidate, live) }]]));
  const tools = ['lookup_order', 'check_flavor_stock', 'process_refund'];
  const now = Date.now();
  for (let i = 1; i <= n; i++) {
    const key = i % 10 === 0 ? `staff${i % SENDERS}@thescoop.com` : `sender${i % SENDERS}@example.com`;
    preview.addCall({
      id: i,
      agent_id: 1,
      tool_id: tools[i % 3]!,
      status: 'success',
      run: 'sender',
      routing_key: key,
      at: now + i,
      dispatch: 'call',
      run_key: null,
    });
  }
  preview.impact({ from: new Date(now), to: new Date(now + n) });
  return performance.now() - started;
}

async function benchOn(databaseUrl: string): Promise<void> {
  const sequelize = createSequelize(databaseUrl);
  const tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, adminToken: 'bench-admin-token-0123456789', senderCheck: senderAsGiven });
  try {
    await tg.migrate();
    const ids = await setUp(sequelize);
    const previews = internalsOf(tg).previews;
    const changes: [string, PreviewInput][] = [
      ['open Finance to every sender', { change: { update: { attachment_id: ids.finance, rules: [] } } }],
      [
        'cap refunds at 1 a day per sender',
        { change: { update: { attachment_id: ids.finance, caps: [{ per: 'sender', limit: 1, window: '1d' }] } } },
      ],
      [
        "a toolkit's members (Finance)",
        { change: { toolkit: { toolkit_id: ids.toolkit, member_tool_ids: ['process_refund', 'send_email'] } } },
      ],
      [
        'access rules refusing one domain',
        { change: { access_rules: { agent_id: ids.agent, rules: [{ kind: 'deny', pattern: '*@example.com' }] } } },
      ],
    ];
    console.log(`preview over the window's calls (${SENDERS} distinct senders; as many rows again outside it), ${ROUNDS} rounds each\n`);
    console.log(
      `${'calls in window'.padEnd(16)} ${'change'.padEnd(36)} ${'median'.padStart(10)} ${'slowest'.padStart(10)} ${'CPU'.padStart(10)} ${'loop wait'.padStart(10)}  changed calls`,
    );
    for (const n of SIZES) {
      await record(sequelize, ids, n);
      for (const [label, input] of changes) {
        const r = await timed(() => previews.preview(input));
        const impact = r.answer as { calls_examined: number; calls: { counts: Record<string, number> } };
        if (impact.calls_examined !== n) throw new Error(`the preview read ${impact.calls_examined} calls, not the window's ${n}`);
        const changed = Object.values(impact.calls.counts).reduce((a, b) => a + b, 0);
        console.log(
          `${String(n).padEnd(16)} ${label.padEnd(36)} ${`${r.median.toFixed(0)} ms`.padStart(10)} ${`${r.max.toFixed(0)} ms`.padStart(10)} ${`${r.cpu.toFixed(0)} ms`.padStart(10)} ${`${r.loop.toFixed(0)} ms`.padStart(10)}  ${changed}`,
        );
      }
    }
    console.log('\nthe pure core alone (two compiled policies, the calls replayed, caps counted), no database:');
    for (const n of SIZES) console.log(`  ${String(n).padEnd(8)} calls  ${coreOnly(n).toFixed(1)} ms`);
  } finally {
    await tg.close();
    await sequelize.close();
  }
}

export function benchPolicyPreview(): Promise<void> {
  return withBenchDatabase('preview', benchOn);
}

if (require.main === module) {
  benchPolicyPreview().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
