// GET /agents/:id/tasks (client): the tasks task_creator filed, oldest first.
import { Router } from 'express';
import { parse } from '../src/http/parse';
import { idParam } from '../src/http/schemas';
import type { Toolgate } from '../src/toolgate';

export function tasksRouter(tg: Toolgate): Router {
  const router = Router();
  router.get('/agents/:id/tasks', tg.requireRole('client'), async (req, res) => {
    const agent = await tg.agents.get(parse(idParam, req.params.id, 'path'));
    res.json(await tg.tasks.listTasks(agent.id));
  });
  return router;
}
