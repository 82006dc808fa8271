// GET /agents/:id/tasks (client): the tasks task_creator filed, oldest first.
import { z } from 'zod';
import { taskViewSchema } from '../src/tasks/task-store';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const tasksRoutes = routeSection<Pick<RouteServices, 'agents' | 'tasks'>>('Tasks and chat', (route) => [
  route({
    method: 'get',
    path: '/agents/:id/tasks',
    summary: 'The tasks task_creator filed',
    roles: ['client'],
    success: { status: 200, description: 'Oldest first', schema: z.array(taskViewSchema) },
    handle: async (tg, { ids }) => {
      const agent = await tg.agents.get(ids.id);
      return tg.tasks.listTasks(agent.id);
    },
  }),
]);
