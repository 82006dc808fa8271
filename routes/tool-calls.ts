// Tool calls: the records (admin), and the dispatch of one host tool under the run's resolution
// (the path a model harness takes). Two routers, so a host can mount one without the other.
import { Router } from 'express';
import { z } from 'zod';
import { toolIdSchema } from '../src/core/types';
import { parse, pathId } from '../src/http/parse';
import { authenticationResultsSchema, text } from '../src/http/schemas';
import { listToolCalls } from '../src/services/tool-calls';
import { currentRun } from '../middleware/tool-run';
import { bodyOf, validateBody } from '../middleware/validate-body';
import type { RouteServices } from './route-services';

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

export function toolCallRecordsRouter(tg: Pick<RouteServices, 'agents' | 'requireRole' | 'sequelize'>): Router {
  const router = Router();
  router.get('/agents/:id/tool-calls', tg.requireRole('admin'), async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const { limit } = parse(listQuery, req.query, 'query');
    await tg.agents.get(agentId);
    res.json(await listToolCalls(tg.sequelize, agentId, limit));
  });
  return router;
}

export function dispatchRouter(tg: Pick<RouteServices, 'requireRole' | 'toolRun'>): Router {
  const router = Router();

  router.post(
    '/agents/:id/tool-calls',
    tg.requireRole('client', 'scheduler'),
    validateBody(dispatchBody),
    tg.toolRun(),
    async (req, res) => {
      const body = bodyOf(req, dispatchBody);
      const outcome = await currentRun(req).callTool(body.tool, body.input);
      // A tool that threw is a result for the caller (as MCP's isError), with the tool's own words.
      res.json(outcome.status === 'success' ? { tool: body.tool, status: 'success', output: outcome.output } : { tool: body.tool, status: 'failure', error: outcome.error });
    },
  );
  return router;
}
