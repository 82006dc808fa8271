// GET /tools: the manifest, as the dashboard's checklist shows it.
import { z } from 'zod';
import { toolDefinitionSchema } from '../src/core/types';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const toolsRoutes = routeSection<Pick<RouteServices, 'registry'>>('Tools and toolkits', (route) => [
  route({
    method: 'get',
    path: '/tools',
    summary: 'The tool manifest',
    description: 'Every registered tool, builtins first: what a toolkit can hold.',
    roles: ['admin'],
    success: { status: 200, description: 'The registered tools', schema: z.array(toolDefinitionSchema) },
    handle: (tg) => tg.registry.manifest.list(),
  }),
]);
