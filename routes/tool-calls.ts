// Tool calls: dispatch one host tool under the run's resolution (the path a model harness takes),
// and read the records (admin).
import { Router } from 'express';
import { z } from 'zod';
import { toolIdSchema } from '../src/core/types';
import { NotDispatchableError } from '../src/errors';
import { parse, pathId } from '../src/http/parse';
import { authenticationResultsSchema, text } from '../src/http/schemas';
import { listToolCalls } from '../src/services/tool-calls';
import type { Toolgate } from '../src/toolgate';
import { currentRun } from '../middleware/tool-run';
import { bodyOf, validateBody } from '../middleware/validate-body';

const dispatchBody = z.union([
  z.strictObject({
    tool: toolIdSchema,
    input: z.unknown().optional(),
    sender: text(1000).optional(),
    from: text(1000).optional(),
    authentication_results: authenticationResultsSchema.optional(),
  }),
  z.strictObject({ tool: toolIdSchema, input: z.unknown().optional(), scheduled: z.literal(true) }),
]);

const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

export function toolCallsRouter(tg: Toolgate): Router {
  const router = Router();

  router.get('/agents/:id/tool-calls', tg.requireRole('admin'), async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const { limit } = parse(listQuery, req.query, 'query');
    await tg.agents.get(agentId);
    res.json(await listToolCalls(tg.sequelize, agentId, limit));
  });

  router.post(
    '/agents/:id/tool-calls',
    tg.requireRole('client', 'scheduler'),
    validateBody(dispatchBody),
    tg.toolRun(),
    async (req, res) => {
      const run = currentRun(req);
      const body = bodyOf(req, dispatchBody);
      const tool = tg.registry.hostTool(body.tool);
      // Refused first when not offered, whatever the tool is: the check never depends on it.
      if (!run.offers(body.tool)) throw await run.refuse(body.tool);
      if (!tool) throw new NotDispatchableError(body.tool);
      const input = parse(tool.input, body.input, 'body');
      const outcome = await run.execute(body.tool, () =>
        tool.execute(input, { agent_id: run.agentId, run: run.run.kind, routing_key: run.routingKey, sequelize: tg.sequelize }),
      );
      // A tool that threw is a result for the caller (as MCP's isError), with the tool's own words.
      res.json(outcome.status === 'success' ? { tool: body.tool, status: 'success', output: outcome.output } : { tool: body.tool, status: 'failure', error: outcome.error });
    },
  );
  return router;
}
