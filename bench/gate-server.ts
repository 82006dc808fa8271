// The host app the throughput benchmark drives, in a process of its own: one trivial handler mounted
// bare, behind two middleware that do nothing (the control), behind toolRun() + requireTool() with the
// policy cache (listen mode), and behind the same without a cache (every run reads and compiles its policy). Prints {"port", "agent", "pid"} when ready.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createSequelize } from '../src/db/connect';
import { SCOOP_TOOLS } from '../src/demo/scoop-tools';
import { ListenedPolicies } from '../src/run/listened-policies';
import { createToolgate, internalsOf } from '../src/toolgate';
import { createBenchAgent } from './bench-agent';

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL!;
  const cached = createToolgate({ sequelize: createSequelize(url, { pool: { max: 10 } }), tools: SCOOP_TOOLS, policyCache: 'listen' });
  const uncached = createToolgate({ sequelize: createSequelize(url, { pool: { max: 10 } }), tools: SCOOP_TOOLS, policyCache: 'off' });
  await cached.migrate();
  await cached.syncSystemToolkits();
  const agent = await createBenchAgent(cached);
  const policies = internalsOf(cached).runs.policies as ListenedPolicies;
  policies.start();
  if (policies.listenerState !== 'listening') await once(policies, 'listening');

  const handler: express.RequestHandler = (_req, res) => {
    res.json({ ok: true });
  };
  const app = express();
  app.post('/bare/:id', express.json(), handler);
  // The control: two middleware that do nothing, where toolRun() and requireTool() stand.
  const pass: express.RequestHandler = (_req, _res, next) => next();
  app.post('/two-layers/:id', express.json(), pass, pass, handler);
  app.post('/gated/:id', express.json(), cached.toolRun(), cached.requireTool('email_analyzer'), handler);
  app.post('/gated-uncached/:id', express.json(), uncached.toolRun(), uncached.requireTool('email_analyzer'), handler);
  app.use(cached.errorHandler());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, agent, pid: process.pid })}\n`);
  process.on('SIGTERM', () => {
    server.close();
    void Promise.all([cached.close(), uncached.close()]).then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
