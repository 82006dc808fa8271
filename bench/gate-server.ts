// The host app the throughput benchmark drives, in a process of its own: one trivial handler mounted
// bare, behind two middleware that do nothing (the control), behind toolRun() + requireTool() with the
// policy cache (listen mode), behind the same without a cache (every run reads and compiles its
// policy), and behind the README example's toolgate as a host writes it: createSequelize(url) and
// createToolgate() with the README's options only, so the library's defaults decide. Prints
// {"port", "agent", "pid"} when ready.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import { createSequelize } from '../src/db/connect';
import { SCOOP_TOOLS } from '../src/app/demo/scoop-tools';
import { ListenedPolicies } from '../src/run/listened-policies';
import { createToolgate, internalsOf } from '../src/toolgate';
import { defineTool } from '../src/tools/tool-registry';
import { createBenchAgent } from './bench-agent';

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL!;
  const cached = createToolgate({ sequelize: createSequelize(url, { pool: { max: 10 } }), tools: SCOOP_TOOLS, policyCache: 'listen' });
  const uncached = createToolgate({ sequelize: createSequelize(url, { pool: { max: 10 } }), tools: SCOOP_TOOLS, policyCache: 'off' });
  // As examples/host-app.ts builds it: no option beyond the README's.
  const lookupOrder = defineTool({
    id: 'lookup_order',
    display_name: 'Look up order',
    summary: 'Finds an order by its id and tells its status.',
    input: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, status: 'delivered' }),
  });
  const readme = createToolgate({
    sequelize: createSequelize(url),
    adminToken: 'bench-admin-token-0123456789abcdef',
    tools: [lookupOrder],
  });
  // The README example as written: sender authentication by the receiving server's authserv-id, and
  // its route's whole chain (checkHost, the body parser, toolRun, requireTool), with toolgate's own
  // routes mounted before it as the example mounts them.
  const asWritten = createToolgate({
    sequelize: createSequelize(url),
    adminToken: 'bench-admin-token-0123456789abcdef',
    authservId: 'mx.thescoop.com',
    tools: [lookupOrder],
  });
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
  app.post('/readme/:id', express.json(), readme.toolRun(), readme.requireTool('email_analyzer'), handler);
  // The README example's app as written, on a port of its own: toolgate's routes under /api, then its route.
  const readmeApp = express();
  readmeApp.use('/api', asWritten.router);
  readmeApp.post(
    '/as-written/:id',
    asWritten.checkHost(),
    express.json(),
    asWritten.toolRun(),
    asWritten.requireTool('email_analyzer'),
    handler,
  );
  // Its parts, one left out at a time (BENCH_AS_WRITTEN_PARTS): the route ungated in the same app,
  // with the same body; without checkHost(); with senders taken as given (no authservId).
  readmeApp.post('/as-written-ungated/:id', express.json(), handler);
  readmeApp.post('/as-written-no-check-host/:id', express.json(), asWritten.toolRun(), asWritten.requireTool('email_analyzer'), handler);
  readmeApp.post(
    '/as-written-as-given/:id',
    readme.checkHost(),
    express.json(),
    readme.toolRun(),
    readme.requireTool('email_analyzer'),
    handler,
  );
  readmeApp.use(asWritten.errorHandler());
  const readmeServer = readmeApp.listen(0, '127.0.0.1');
  await once(readmeServer, 'listening');
  app.use(cached.errorHandler());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  process.stdout.write(
    `${JSON.stringify({ port: (server.address() as AddressInfo).port, readmePort: (readmeServer.address() as AddressInfo).port, agent, pid: process.pid })}\n`,
  );
  process.on('SIGTERM', () => {
    server.close();
    readmeServer.close();
    void Promise.all([cached.close(), uncached.close(), readme.close(), asWritten.close()]).then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
