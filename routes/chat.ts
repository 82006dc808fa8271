// POST /agents/:id/chat (client): talking to the agent needs no tool (the legacy "pure chat
// assistant" recipe), so no run is resolved and nothing is dispatched.
import { Router } from 'express';
import { z } from 'zod';
import { parse, pathId } from '../src/http/parse';
import { text } from '../src/http/schemas';
import { modelContext, orUpstreamError } from '../src/llm/language-model';
import { chatResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export const chatBody = z.strictObject({
  message: text(20_000).refine((s) => s.trim() !== '', 'must not be empty'),
  sender: text(1000).optional(),
});

export function chatRouter(tg: Pick<RouteServices, 'agents' | 'model' | 'requireRole'>): Router {
  const router = Router();
  router.post('/agents/:id/chat', tg.requireRole('client'), async (req, res) => {
    const agent = await tg.agents.get(pathId(req.params, 'id'));
    const { message } = parse(chatBody, req.body, 'body');
    const reply = await orUpstreamError(tg.model.chat(message, modelContext(agent, new Date())));
    res.json({ reply });
  });
  return router;
}

export const chatRoutes = describeRoutes('Tasks and chat', [
  {
    method: 'post',
    path: '/agents/:id/chat',
    summary: 'Talk to the agent',
    description: 'Needs no tool: no run is resolved and no record is written.',
    roles: ['client'],
    body: chatBody,
    success: { status: 200, description: "The agent's reply", schema: chatResponse },
    errors: ['upstream_error'],
  },
]);
