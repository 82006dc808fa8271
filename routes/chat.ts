// POST /agents/:id/chat (client): talking to the agent needs no tool (the legacy "pure chat
// assistant" recipe), but it is a message from a sender, so the agent's access rules decide first.
import { Router } from 'express';
import { z } from 'zod';
import { currentRun } from '../middleware/tool-run';
import { bodyOf, validateBody } from '../middleware/validate-body';
import { text } from '../src/http/schemas';
import { modelContext, orUpstreamError } from '../src/llm/language-model';
import { chatResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export const chatBody = z.strictObject({
  message: text(20_000).refine((s) => s.trim() !== '', 'must not be empty'),
  sender: text(1000).optional(),
});

export function chatRouter(tg: Pick<RouteServices, 'model' | 'requireRole' | 'toolRun'>): Router {
  const router = Router();
  router.post('/agents/:id/chat', tg.requireRole('client'), validateBody(chatBody), tg.toolRun(), async (req, res) => {
    const run = currentRun(req);
    const { message } = bodyOf(req, chatBody);
    const reply = await orUpstreamError(tg.model.chat(message, modelContext(run.agent, new Date())));
    res.json({ reply });
  });
  return router;
}

export const chatRoutes = describeRoutes('Tasks and chat', [
  {
    method: 'post',
    path: '/agents/:id/chat',
    summary: 'Talk to the agent',
    description: "Needs no tool, but it is a message from a sender: the agent's access rules decide first, and a refused sender gets a 403 with one denied record. No tool runs.",
    roles: ['client'],
    body: chatBody,
    success: { status: 200, description: "The agent's reply", schema: chatResponse },
    errors: ['sender_forbidden', 'upstream_error'],
  },
]);
