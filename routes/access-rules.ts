// Agent access rules (admin): which senders the agent handles at all (SEMANTICS §9).
import { z } from 'zod';
import { ruleViewSchema } from '../src/services/attachments';
import { ruleSchema } from '../src/services/attachment-inputs';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const accessRulesRoutes = routeSection<Pick<RouteServices, 'accessRules'>>('Agent access rules', (route) => [
  route({
    method: 'get',
    path: '/agents/:id/access-rules',
    summary: "An agent's access rules",
    description: 'Which senders the agent handles at all, decided before any tool (SEMANTICS §9). In the order they were added.',
    roles: ['admin'],
    success: { status: 200, description: 'The rules', schema: z.array(ruleViewSchema) },
    handle: (tg, { ids }) => tg.accessRules.list(ids.id),
  }),
  route({
    method: 'post',
    path: '/agents/:id/access-rules',
    summary: 'Add an access rule',
    description: 'The pattern grammar and precedence of the gate rules; a bad pattern is a 422 saying why.',
    roles: ['admin'],
    body: ruleSchema,
    success: { status: 201, description: 'The rule, its pattern normalized', schema: ruleViewSchema },
    errors: ['conflict'],
    handle: (tg, { ids, body }) => tg.accessRules.add(ids.id, body),
  }),
  route({
    method: 'delete',
    path: '/agents/:id/access-rules/:ruleId',
    summary: 'Remove an access rule',
    roles: ['admin'],
    success: { status: 204, description: 'Removed' },
    handle: async (tg, { ids }) => {
      await tg.accessRules.delete(ids.id, ids.ruleId);
    },
  }),
]);
