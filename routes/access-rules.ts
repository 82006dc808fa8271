// Agent access rules (admin): which senders the agent handles at all (SEMANTICS §9).
import { Router } from 'express';
import { pathId } from '../src/http/parse';
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
