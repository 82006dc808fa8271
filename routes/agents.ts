// Agents: create/update/delete (admin), read (admin or client).
import { z } from 'zod';
import { agentCreatedSchema, agentInputSchema, agentPatchSchema, agentViewSchema } from '../src/services/agents';
import { linkNextPage, pageQuery } from './paging';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const agentsQuery = z.strictObject({
  ...pageQuery,
  name: z.string().max(200).optional(),
});

export const agentsRoutes = routeSection<Pick<RouteServices, 'agents'>>('Agents', (route) => [
  route({
    method: 'get',
    path: '/agents',
    summary: 'List the agents, a page at a time',
    description:
      'By name regardless of case, then id; at most `limit` (default 100). `name` keeps the agents whose name begins with it, regardless of case. When more follow, the `Toolgate-Next-Cursor` header holds the cursor to pass as `after`, and `Link` (rel="next") the next page; a cursor this list did not give is a 422 `validation_error` of type `invalid_cursor`.',
    roles: ['admin', 'client'],
    query: agentsQuery,
    success: { status: 200, description: 'A page of the agents', schema: z.array(agentViewSchema) },
    handle: async (tg, { req, res, query }) => {
      const page = await tg.agents.page(query);
      linkNextPage(req, res, page.next, { limit: query.limit, name: query.name });
      return page.agents;
    },
  }),
  route({
    method: 'get',
    path: '/agents/:id',
    summary: 'Read an agent',
    roles: ['admin', 'client'],
    success: { status: 200, description: 'The agent', schema: agentViewSchema },
    handle: (tg, { ids }) => tg.agents.get(ids.id),
  }),
  route({
    method: 'post',
    path: '/agents',
    summary: 'Create an agent',
    description:
      "With neither toolkit_ids nor enabled_tools, the agent gets Default Tools with an open gate; with toolkit_ids, exactly those; with enabled_tools, the legacy string's access.",
    roles: ['admin'],
    body: agentInputSchema,
    success: { status: 201, description: 'The agent', schema: agentCreatedSchema },
    handle: (tg, { body }) => tg.agents.create(body),
  }),
  route({
    method: 'patch',
    path: '/agents/:id',
    summary: 'Change an agent',
    description: 'Any of the create fields but toolkit_ids. With enabled_tools, the legacy grant follows the new string.',
    roles: ['admin'],
    body: agentPatchSchema,
    // HTTP.md answers an agent's update with 204, as its delete; GET /agents/:id reads it back.
    success: { status: 204, description: 'Changed; GET /agents/{id} reads it back' },
    handle: async (tg, { ids, body }) => {
      await tg.agents.update(ids.id, body);
    },
  }),
  route({
    method: 'delete',
    path: '/agents/:id',
    summary: 'Delete an agent',
    description: 'Its attachments, rules, documents, tasks and tool-call records go with it.',
    roles: ['admin'],
    success: { status: 204, description: 'Deleted' },
    handle: async (tg, { ids }) => {
      await tg.agents.delete(ids.id);
    },
  }),
]);
