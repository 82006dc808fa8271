// The whole warm gate in process, as toolRun() + requireTool() do it for one request: the routing
// key, the cache lookup, the run's resolved set, the check. CPU time per request (process.cpuUsage
// over many requests, so the event loop's own work between awaits is counted too).
import { once } from 'node:events';
import { routingKeyOf } from '../src/core/routing-key';
import { createSequelize } from '../src/db/connect';
import { SCOOP_TOOLS } from '../src/app/demo/scoop-tools';
import { ListenedPolicies } from '../src/run/listened-policies';
import { createToolgate, internalsOf } from '../src/toolgate';
import { ADMITTED, createBenchAgent } from './bench-agent';
import { withBenchDatabase } from './postgres-server';

const REQUESTS = 200_000;
const SENDERS = [...ADMITTED, 'Someone <someone+x@partner0.com>'];

export async function benchWarmGate(): Promise<void> {
  await withBenchDatabase('warm', async (url) => {
    const sequelize = createSequelize(url);
    const tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, policyCache: 'listen' });
    try {
      await tg.migrate();
      await tg.syncSystemToolkits();
      const agent = await createBenchAgent(tg);
      const runs = internalsOf(tg).runs;
      const policies = runs.policies as ListenedPolicies;
      policies.start();
      if (policies.listenerState !== 'listening') await once(policies, 'listening');
      let granted = 0;
      const one = async (i: number) => {
        const asked = { kind: 'sender', routing_key: routingKeyOf(SENDERS[i % SENDERS.length]) } as const;
        // As toolRun() does: a warm hit starts from the cache alone, anything else reads.
        const run = runs.startCached(agent, asked) ?? (await runs.start(agent, asked));
        if (run.offers('email_analyzer')) granted += 1;
      };
      for (let i = 0; i < 20_000; i++) await one(i);
      const cpu = process.cpuUsage();
      const wall = performance.now();
      for (let i = 0; i < REQUESTS; i++) await one(i);
      const used = process.cpuUsage(cpu);
      const wallUs = ((performance.now() - wall) * 1000) / REQUESTS;
      const cpuUs = (used.user + used.system) / REQUESTS;
      const keyStart = process.cpuUsage();
      let keys = 0;
      for (let i = 0; i < REQUESTS; i++) if (routingKeyOf(SENDERS[i % SENDERS.length]) !== null) keys += 1;
      const keyUs = (process.cpuUsage(keyStart).user + process.cpuUsage(keyStart).system) / REQUESTS;
      console.log(
        `warm gate in process (${REQUESTS.toLocaleString('en-US')} requests, cache hits, ${granted === REQUESTS + 20_000 ? 'all' : granted} granted): ${cpuUs.toFixed(2)} µs CPU per request (${wallUs.toFixed(2)} µs wall), of which the routing key ${keyUs.toFixed(2)} µs (${keys === REQUESTS ? 'all keyed' : keys})`,
      );
    } finally {
      await tg.close();
      await sequelize.close();
    }
  });
}

if (require.main === module) {
  benchWarmGate().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
