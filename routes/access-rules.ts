// Agent access rules (admin): which senders the agent handles at all (SEMANTICS §9).
import { Router } from 'express';
import { z } from 'zod';
import { pathId } from '../src/http/parse';
import { ruleResponse } from '../src/http/responses';
import { ruleSchema } from '../src/services/inputs';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export function accessRulesRouter(tg: Pick<RouteServices, 'accessRules' | 'requireRole'>): Router {
  const router = Router();
  const admin = tg.requireRole('admin');

  router.get('/agents/:id/access-rules', admin, async (req, res) => {
    res.json(await tg.accessRules.list(pathId(req.params, 'id')));
  });

  router.post('/agents/:id/access-rules', admin, async (req, res) => {
    res.status(201).json(await tg.accessRules.add(pathId(req.params, 'id'), req.body));
  });

  router.delete('/agents/:id/access-rules/:ruleId', admin, async (req, res) => {
    await tg.accessRules.delete(pathId(req.params, 'id'), pathId(req.params, 'ruleId'));
    res.status(204).end();
  });
  return router;
}

export const accessRulesRoutes = describeRoutes('Agent access rules', [
  {
    method: 'get',
    path: '/agents/:id/access-rules',
    summary: "An agent's access rules",
    description: 'Which senders the agent handles at all, decided before any tool (SEMANTICS §9). In the order they were added.',
    roles: ['admin'],
    success: { status: 200, description: 'The rules', schema: z.array(ruleResponse) },
  },
  {
    method: 'post',
    path: '/agents/:id/access-rules',
    summary: 'Add an access rule',
    description: 'The pattern grammar and precedence of the gate rules; a bad pattern is a 422 saying why.',
    roles: ['admin'],
    body: ruleSchema,
    success: { status: 201, description: 'The rule, its pattern normalized', schema: ruleResponse },
    errors: ['conflict'],
  },
  { method: 'delete', path: '/agents/:id/access-rules/:ruleId', summary: 'Remove an access rule', roles: ['admin'], success: { status: 204, description: 'Removed' } },
]);
