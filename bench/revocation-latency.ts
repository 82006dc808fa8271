// Revocation latency between two instances on one database: instance A removes the allow rule that
// admitted a sender (through its own services, as the admin route does); instance B runs that
// sender's run in a loop, from its warm cache, until it is refused. 20 trials: the time from A's
// request to B's first refusal. Then 20 trials with B's listening connection killed
// (pg_terminate_backend) just before the change, made by plain SQL: how many of B's runs right after
// were still granted (the goal: none), and how long B took to listen again. Both instances live in
// this process, each with its own pool and listener. Prints; never passes or fails.
import { once } from 'node:events';
import { createSequelize } from '../src/db/connect';
import { withClient } from '../src/db/database-url';
import { SCOOP_TOOLS } from '../src/app/demo/scoop-tools';
import { ListenedPolicies } from '../src/run/listened-policies';
import { createToolgate, internalsOf, type Toolgate } from '../src/toolgate';
import { withBenchDatabase } from './postgres-server';

const TRIALS = 20;
const RUN = { kind: 'sender' as const, routing_key: 'mara@thescoop.com' };

async function ready(tg: Toolgate): Promise<ListenedPolicies> {
  const policies = internalsOf(tg).runs.policies as ListenedPolicies;
  policies.start();
  if (policies.listenerState !== 'listening') await once(policies, 'listening');
  return policies;
}

/** One run on the instance. It yields to the event loop first, as a request arriving over I/O does:
 * a loop of cache hits alone would never let the notification be read. */
async function grantedOn(tg: Toolgate, agentId: number): Promise<boolean> {
  await new Promise((resolve) => setImmediate(resolve));
  return (await internalsOf(tg).runs.start(agentId, RUN)).offers('check_flavor_stock');
}

export async function benchRevocation(): Promise<void> {
  await withBenchDatabase('revoke', async (url) => {
    const sa = createSequelize(url);
    const sb = createSequelize(url);
    const a = createToolgate({ sequelize: sa, tools: SCOOP_TOOLS, policyCache: 'listen' });
    const b = createToolgate({ sequelize: sb, tools: SCOOP_TOOLS, policyCache: 'listen' });
    try {
      await a.migrate();
      const kit = await a.toolkits.create({ name: 'Stock', member_tool_ids: ['check_flavor_stock'] });
      const policiesB = await ready(b);
      const latencies: number[] = [];
      let stale = 0;
      for (let t = 0; t < TRIALS; t++) {
        const agent = await a.agents.create({ name: `Revoke ${t}`, toolkit_ids: [] });
        const att = await a.attachments.attach(agent.id, {
          toolkit_id: kit.id,
          rules: [
            { kind: 'allow', pattern: 'mara@thescoop.com' },
            { kind: 'allow', pattern: 'boss@thescoop.com' },
          ],
        });
        const rule = att.rules.find((r) => r.pattern === 'mara@thescoop.com')!;
        while (!(await grantedOn(b, agent.id)));
        // The notifications of the grant's own creation may still drop it once: warm until it holds.
        while ((await internalsOf(b).runs.policy(agent.id)).cache !== 'hit') await new Promise((resolve) => setImmediate(resolve));
        const started = performance.now();
        await a.attachments.deleteRule(agent.id, att.id, rule.id);
        let checks = 0;
        while (await grantedOn(b, agent.id)) checks += 1;
        latencies.push(performance.now() - started);
        stale += checks;
      }
      const sorted = [...latencies].sort((x, y) => x - y);
      console.log(`revocation from instance A to a refusal on instance B (${TRIALS} trials, B polling from its warm cache):`);
      console.log(
        `  median ${sorted[Math.floor(TRIALS / 2)]!.toFixed(2)} ms, max ${sorted[TRIALS - 1]!.toFixed(2)} ms, min ${sorted[0]!.toFixed(2)} ms (B's grants served while the notification was on its way: ${stale})`,
      );

      let staleAfterKill = 0;
      const back: number[] = [];
      for (let t = 0; t < TRIALS; t++) {
        const agent = await a.agents.create({ name: `Killed ${t}`, toolkit_ids: [] });
        const att = await a.attachments.attach(agent.id, {
          toolkit_id: kit.id,
          rules: [
            { kind: 'allow', pattern: 'mara@thescoop.com' },
            { kind: 'allow', pattern: 'boss@thescoop.com' },
          ],
        });
        const rule = att.rules.find((r) => r.pattern === 'mara@thescoop.com')!;
        await ready(b);
        while (!(await grantedOn(b, agent.id)));
        const lost = once(policiesB, 'lost');
        const killedAt = performance.now();
        await withClient(url, (c) => c.query('SELECT pg_terminate_backend($1)', [policiesB.listenerPid]));
        await lost;
        await withClient(url, (c) => c.query('DELETE FROM agent_toolkit_rules WHERE id = $1', [rule.id]));
        for (let i = 0; i < 50; i++) if (await grantedOn(b, agent.id)) staleAfterKill += 1;
        await ready(b);
        back.push(performance.now() - killedAt);
      }
      const backSorted = [...back].sort((x, y) => x - y);
      console.log(
        `listening connection killed (pg_terminate_backend), then the grant revoked by plain SQL (${TRIALS} trials, 50 runs on B each):`,
      );
      console.log(
        `  stale grants served by B: ${staleAfterKill} of ${TRIALS * 50} runs; B listening again after median ${backSorted[Math.floor(TRIALS / 2)]!.toFixed(0)} ms, max ${backSorted[TRIALS - 1]!.toFixed(0)} ms (reading through meanwhile)`,
      );
    } finally {
      await a.close();
      await b.close();
      await sa.close();
      await sb.close();
    }
  });
}

if (require.main === module) {
  benchRevocation().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
