// GET /agents/:id/tasks (client): the tasks task_creator filed, oldest first.
import { Router } from 'express';
import { pathId } from '../src/http/parse';
import type { Toolgate } from '../src/toolgate';

export function tasksRouter(tg: Toolgate): Router {
  const router = Router();
  router.get('/agents/:id/tasks', tg.requireRole('client'), async (req, res) => {
    const agent = await tg.agents.get(pathId(req.params, 'id'));
    res.json(await tg.tasks.listTasks(agent.id));
  });
  return router;
}
