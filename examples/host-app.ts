// A host app that embeds toolgate: its own route gated by toolgate, toolgate's HTTP routes under
// /api, and toolgate's refusals answered as JSON. Start it on a database, as often as you like:
//   DATABASE_URL=postgres://user@127.0.0.1:5432/shop ADMIN_TOKEN=$(openssl rand -hex 32) AUTHSERV_ID=mx.thescoop.com node host-app.js
import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import { createSequelize, createToolgate, currentRun, defineTool } from 'toolgate';

const lookupOrder = defineTool({
  id: 'lookup_order',
  display_name: 'Look up order',
  summary: 'Finds an order by its id and tells its status.',
  input: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => ({ order_id, status: 'delivered' }),
});

async function main(): Promise<void> {
  const sequelize = createSequelize(process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/shop');
  const tg = createToolgate({
    sequelize,
    adminToken: process.env.ADMIN_TOKEN,
    // Sender authentication: a From counts only when your receiving mail server, named by the
    // authserv-id it stamps, vouches for it in the message's Authentication-Results. Without it,
    // every sender is taken at its word (toolgate warns when built): whoever writes
    // "from": "mara@thescoop.com" gets the tools Mara's address is granted.
    authservId: process.env.AUTHSERV_ID ?? 'mx.thescoop.com',
    tools: [lookupOrder],
  });
  await tg.migrate();
  await tg.syncSystemToolkits();

  // An operator's grant, made from code: Sundae triages mail and looks orders up for the shop only.
  // ensure() gets by name or creates, so a restart makes nothing twice and overwrites nothing an
  // operator changed since; the grant is made with the agent only, so a revoked one stays revoked.
  const triage = await tg.toolkits.ensure({ name: 'Triage', member_tool_ids: ['email_analyzer', 'lookup_order'] });
  const sundae = await tg.agents.ensure({ name: 'Sundae', toolkit_ids: [] });
  if (sundae.created) {
    await tg.attachments.attach(sundae.id, { toolkit_id: triage.id, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] });
  }

  const app = express();
  app.use('/api', tg.router); // toolgate's own routes: toolkits, agents, grants, tool calls...
  // checkHost(): this route serves callers with no credential, so it answers only for localhost and
  // IP addresses (421 otherwise), and a web page cannot reach it by DNS rebinding a name to 127.0.0.1.
  app.post('/agents/:id/triage', tg.checkHost(), express.json(), tg.toolRun(), tg.requireTool('email_analyzer'), async (req, res) => {
    // Resolved once, for this message's sender: its From, as its authentication_results vouch for it.
    const run = currentRun(req);
    // Checked against the tool's schema (a 422 naming the body's field), recorded, run. Called by its
    // value, the outcome is typed by it: once a success, order.output is { order_id, status }.
    const order = await run.callTool(lookupOrder, { order_id: req.body.order_id });
    if (order.status === 'failure') {
      // The tool threw: its own words may name a database or a host, so they go to your log, and
      // the caller gets yours.
      console.error('lookup_order failed:', order.thrown);
      res.status(502).json({ detail: 'The order could not be looked up. Try again later.' });
      return;
    }
    if (order.status === 'pending_approval') {
      // An operator made the tool need approval: the call was filed as a request, and did not run.
      res.status(202).json({ detail: 'Looking the order up awaits approval.', approval_request_id: order.request.id });
      return;
    }
    // task_creator is an enhancement: when it is not offered, the step is skipped, never refused.
    const tasks = run.offers('task_creator') ? [`Reply to ${req.body.from}`] : (await run.skip('task_creator'), []);
    res.json({ tools: run.tools, order: order.output, tasks });
  });
  app.use(tg.errorHandler()); // refusals as {detail, code, tool}; other errors go on to yours

  const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    console.log(`listening on http://127.0.0.1:${port}, agent ${sundae.id}`);
  });
  // Stop taking requests, then close the pool: the process ends, as toolgate's own background work
  // (its policy listener, heartbeat and sweeper) never keeps it alive.
  process.on('SIGTERM', () => server.close(() => void sequelize.close()));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
