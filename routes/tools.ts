// GET /tools: the manifest, as the dashboard's checklist shows it.
import { Router } from 'express';
import { z } from 'zod';
import { toolResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export function toolsRouter(tg: Pick<RouteServices, 'registry' | 'requireRole'>): Router {
  const router = Router();
  router.get('/tools', tg.requireRole('admin'), (_req, res) => {
    res.json(tg.registry.manifest.list());
  });
  return router;
}

export const toolsRoutes = describeRoutes('Tools and toolkits', [
  {
    method: 'get',
    path: '/tools',
    summary: 'The tool manifest',
    description: 'Every registered tool, builtins first: what a toolkit can hold.',
    roles: ['admin'],
    success: { status: 200, description: 'The registered tools', schema: z.array(toolResponse) },
  },
]);
