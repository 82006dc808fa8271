// Agent runs (SEMANTICS §10): a client's message handled in a thread, a scheduler's instruction
// handled with no thread, and the threads and runs an operator reads back (admin).
import { Router } from 'express';
import { z } from 'zod';
import { currentRun } from '../middleware/tool-run';
import { bodyOf, validateBody } from '../middleware/validate-body';
import { handleInstruction, handleMessage } from '../src/agent/handle-message';
import { emailMessageSchema, inboundMessage } from '../src/email/message';
import { parse, pathId } from '../src/http/parse';
import { agentRunResponse, storedRunResponse, threadResponse, threadWithMessagesResponse } from '../src/http/responses';
import { bodyId, text } from '../src/http/schemas';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export const messageRunBody = z.strictObject({ thread_id: bodyId.optional(), message: emailMessageSchema });
export const instructionRunBody = z.strictObject({ instruction: text(20_000).refine((s) => s.trim() !== '', 'must not be empty') });
export const agentRunsListQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50) });

export function agentRunsRouter(tg: Pick<RouteServices, 'agentRuns' | 'agents' | 'requireRole' | 'toolRun'>): Router {
  const router = Router();
  const admin = tg.requireRole('admin');

  router.post(
    '/agents/:id/messages',
    tg.requireRole('client'),
    validateBody(messageRunBody),
    // The sender is the message's From, authenticated by the message's own headers.
    tg.toolRun({
      runOf: (req) => {
        const { message } = bodyOf(req, messageRunBody);
        return { kind: 'sender', sender: message.from, authentication_results: message.authentication_results };
      },
    }),
    async (req, res) => {
      const { thread_id, message } = bodyOf(req, messageRunBody);
      res.json(await handleMessage(tg.agentRuns, currentRun(req), { thread_id, message: inboundMessage(message) }));
    },
  );

  router.post('/agents/:id/runs', tg.requireRole('scheduler'), validateBody(instructionRunBody), tg.toolRun({ runOf: () => ({ kind: 'scheduled' }) }), async (req, res) => {
    res.json(await handleInstruction(tg.agentRuns, currentRun(req), bodyOf(req, instructionRunBody).instruction));
  });

  router.get('/agents/:id/threads', admin, async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const { limit } = parse(agentRunsListQuery, req.query, 'query');
    await tg.agents.get(agentId);
    res.json(await tg.agentRuns.store.threads(agentId, limit));
  });

  router.get('/agents/:id/threads/:threadId', admin, async (req, res) => {
    const thread = await tg.agentRuns.store.thread(pathId(req.params, 'id'), pathId(req.params, 'threadId'));
    res.json({ ...thread, messages: await tg.agentRuns.store.threadRuns(thread.id) });
  });

  router.get('/agents/:id/runs', admin, async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const { limit } = parse(agentRunsListQuery, req.query, 'query');
    await tg.agents.get(agentId);
    res.json(await tg.agentRuns.store.runs(agentId, limit));
  });
  return router;
}

export const agentRunsRoutes = describeRoutes('Agent runs', [
  {
    method: 'post',
    path: '/agents/:id/messages',
    summary: 'Handle a message with the agent',
    description:
      "An agent run (SEMANTICS §10): resolved once for the message's sender, the model offered exactly the run's tools, every call through dispatch. A tool not offered is refused, recorded and given back to the model. Without thread_id a new thread starts.",
    roles: ['client'],
    body: messageRunBody,
    success: { status: 200, description: 'The run: what it was offered, its steps in order, the reply, and why it stopped', schema: agentRunResponse },
    errors: ['sender_forbidden'],
  },
  {
    method: 'post',
    path: '/agents/:id/runs',
    summary: 'Run a scheduled instruction',
    description: 'A scheduled run: no sender and no thread; only attachments allowed on scheduled runs are drawn on.',
    roles: ['scheduler'],
    body: instructionRunBody,
    success: { status: 200, description: 'The run', schema: agentRunResponse },
  },
  {
    method: 'get',
    path: '/agents/:id/threads',
    summary: "An agent's threads",
    roles: ['admin'],
    query: agentRunsListQuery,
    success: { status: 200, description: 'Newest activity first', schema: z.array(threadResponse) },
  },
  {
    method: 'get',
    path: '/agents/:id/threads/:threadId',
    summary: 'A thread and its messages',
    roles: ['admin'],
    success: { status: 200, description: 'The thread, its messages oldest first, each with its run', schema: threadWithMessagesResponse },
  },
  {
    method: 'get',
    path: '/agents/:id/runs',
    summary: "An agent's runs",
    description: 'Newest first, scheduled runs included.',
    roles: ['admin'],
    query: agentRunsListQuery,
    success: { status: 200, description: 'The runs', schema: z.array(storedRunResponse) },
  },
]);
