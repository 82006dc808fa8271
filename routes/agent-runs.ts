// Agent runs (SEMANTICS §10): a client's message handled in a thread, a scheduler's instruction
// handled with no thread, and the threads and runs an operator reads back (admin).
import { Router } from 'express';
import { z } from 'zod';
import { currentRun } from '../middleware/tool-run';
import { bodyOf, validateBody } from '../middleware/validate-body';
import { handleInstruction, handleMessage } from '../src/agent/handle-message';
import { emailMessageSchema } from '../src/email/message';
import { parse, pathId } from '../src/http/parse';
import { bodyId, text } from '../src/http/schemas';
import type { RouteServices } from './route-services';

export const messageRunBody = z.strictObject({ thread_id: bodyId.optional(), message: emailMessageSchema });
export const instructionRunBody = z.strictObject({ instruction: text(20_000).refine((s) => s.trim() !== '', 'must not be empty') });
const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50) });

export function agentRunsRouter(tg: Pick<RouteServices, 'agentRuns' | 'agents' | 'requireRole' | 'toolRun'>): Router {
  const router = Router();
  const admin = tg.requireRole('admin');

  router.post(
    '/agents/:id/messages',
    tg.requireRole('client'),
    validateBody(messageRunBody),
    // The sender is the message's From, authenticated by the message's own headers.
    tg.toolRun({ runOf: (req) => ({ kind: 'sender', sender: bodyOf(req, messageRunBody).message.from, authentication_results: bodyOf(req, messageRunBody).message.authentication_results }) }),
    async (req, res) => {
      const { thread_id, message } = bodyOf(req, messageRunBody);
      const inbound = { from: message.from, body: message.body, ...(message.subject !== undefined ? { subject: message.subject } : {}), ...(message.message_id !== undefined ? { message_id: message.message_id } : {}) };
      res.json(await handleMessage(tg.agentRuns, currentRun(req), { thread_id, message: inbound }));
    },
  );

  router.post('/agents/:id/runs', tg.requireRole('scheduler'), validateBody(instructionRunBody), tg.toolRun({ runOf: () => ({ kind: 'scheduled' }) }), async (req, res) => {
    res.json(await handleInstruction(tg.agentRuns, currentRun(req), bodyOf(req, instructionRunBody).instruction));
  });

  router.get('/agents/:id/threads', admin, async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const { limit } = parse(listQuery, req.query, 'query');
    await tg.agents.get(agentId);
    res.json(await tg.agentRuns.store.threads(agentId, limit));
  });

  router.get('/agents/:id/threads/:threadId', admin, async (req, res) => {
    const thread = await tg.agentRuns.store.thread(pathId(req.params, 'id'), pathId(req.params, 'threadId'));
    res.json({ ...thread, messages: await tg.agentRuns.store.threadRuns(thread.id) });
  });

  router.get('/agents/:id/runs', admin, async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const { limit } = parse(listQuery, req.query, 'query');
    await tg.agents.get(agentId);
    res.json(await tg.agentRuns.store.runs(agentId, limit));
  });
  return router;
}
