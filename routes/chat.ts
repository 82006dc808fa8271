// POST /agents/:id/chat (client): talking to the agent needs no tool (the legacy "pure chat
// assistant" recipe), but it is a message from a sender, so the agent's access rules decide first.
import { z } from 'zod';
import { currentRun } from '../middleware/current-run';
import { senderText, text } from '../src/http/fields';
import { modelContext, orUpstreamError } from '../src/llm/language-model';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const chatBody = z.strictObject({
  message: text(20_000).refine((s) => s.trim() !== '', 'must not be empty'),
  sender: senderText.optional(),
});

export const chatRoutes = routeSection<Pick<RouteServices, 'model' | 'toolRun'>>('Tasks and chat', (route) => [
  route({
    method: 'post',
    path: '/agents/:id/chat',
    summary: 'Talk to the agent',
    description:
      "Needs no tool, but it is a message from a sender: the agent's access rules decide first, and a refused sender gets a 403 with one denied record. No tool runs.",
    roles: ['client'],
    body: chatBody,
    success: { status: 200, description: "The agent's reply", schema: z.object({ reply: z.string() }) },
    errors: ['sender_forbidden', 'upstream_error'],
    use: (tg) => [tg.toolRun()],
    handle: async (tg, { req, body }) => {
      const reply = await orUpstreamError(tg.model.chat(body.message, modelContext(currentRun(req).agent, new Date())));
      return { reply };
    },
  }),
]);
