// Agents: create/update/delete (admin), read (admin or client).
import { Router } from 'express';
import { z } from 'zod';
import { agentCreatedResponse, agentResponse } from '../src/http/responses';
import { agentInputSchema, agentPatchSchema } from '../src/services/inputs';
import { describeRoutes } from './route-description';
import { pathId } from '../src/http/parse';
import type { RouteServices } from './route-services';

export function agentsRouter(tg: Pick<RouteServices, 'agents' | 'requireRole'>): Router {
  const router = Router();

  router.get('/agents', tg.requireRole('admin', 'client'), async (_req, res) => {
    res.json(await tg.agents.list());
  });

  router.get('/agents/:id', tg.requireRole('admin', 'client'), async (req, res) => {
    res.json(await tg.agents.get(pathId(req.params, 'id')));
  });

  router.post('/agents', tg.requireRole('admin'), async (req, res) => {
    res.status(201).json(await tg.agents.create(req.body));
  });

  router.patch('/agents/:id', tg.requireRole('admin'), async (req, res) => {
    const id = pathId(req.params, 'id');
    // HTTP.md answers an agent's update with 204, as its delete; GET /agents/:id reads it back.
    await tg.agents.update(id, req.body);
    res.status(204).end();
  });

  router.delete('/agents/:id', tg.requireRole('admin'), async (req, res) => {
    await tg.agents.delete(pathId(req.params, 'id'));
    res.status(204).end();
  });
  return router;
}

export const agentsRoutes = describeRoutes('Agents', [
  { method: 'get', path: '/agents', summary: 'List the agents', roles: ['admin', 'client'], success: { status: 200, description: 'Every agent, by id', schema: z.array(agentResponse) } },
  { method: 'get', path: '/agents/:id', summary: 'Read an agent', roles: ['admin', 'client'], success: { status: 200, description: 'The agent', schema: agentResponse } },
  {
    method: 'post',
    path: '/agents',
    summary: 'Create an agent',
    description: 'With neither toolkit_ids nor enabled_tools, the agent gets Default Tools with an open gate; with toolkit_ids, exactly those; with enabled_tools, the legacy string\'s access.',
    roles: ['admin'],
    body: agentInputSchema,
    success: { status: 201, description: 'The agent', schema: agentCreatedResponse },
  },
  {
    method: 'patch',
    path: '/agents/:id',
    summary: 'Change an agent',
    description: 'Any of the create fields but toolkit_ids. With enabled_tools, the legacy grant follows the new string.',
    roles: ['admin'],
    body: agentPatchSchema,
    success: { status: 204, description: 'Changed; GET /agents/{id} reads it back' },
  },
  {
    method: 'delete',
    path: '/agents/:id',
    summary: 'Delete an agent',
    description: 'Its attachments, rules, documents, tasks and tool-call records go with it.',
    roles: ['admin'],
    success: { status: 204, description: 'Deleted' },
  },
]);
