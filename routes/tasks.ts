// GET /agents/:id/tasks (client): the tasks task_creator filed, oldest first.
import { Router } from 'express';
import { pathId } from '../src/http/parse';
import { z } from 'zod';
import { taskResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export function tasksRouter(tg: Pick<RouteServices, 'agents' | 'requireRole' | 'tasks'>): Router {
  const router = Router();
  router.get('/agents/:id/tasks', tg.requireRole('client'), async (req, res) => {
    const agent = await tg.agents.get(pathId(req.params, 'id'));
    res.json(await tg.tasks.listTasks(agent.id));
  });
  return router;
}

export const tasksRoutes = describeRoutes('Tasks and chat', [
  { method: 'get', path: '/agents/:id/tasks', summary: 'The tasks task_creator filed', roles: ['client'], success: { status: 200, description: 'Oldest first', schema: z.array(taskResponse) } },
]);
