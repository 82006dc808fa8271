// Email (client): analysis, gated by email_analyzer with task_creator as an enhancement; and the
// three-stage workflow, which adds reply_generator.
import { Router } from 'express';
import { bodyOf, validateBody } from '../middleware/validate-body';
import { currentRun } from '../middleware/tool-run';
import { analyzeEmail } from '../src/email/analyze-email';
import { runEmailWorkflow } from '../src/email/email-workflow';
import { emailMessageSchema } from '../src/email/message';
import { analyzeResponse, workflowResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export function emailRouter(tg: Pick<RouteServices, 'email' | 'idempotencyKey' | 'requireRole' | 'requireTool' | 'toolRun'>): Router {
  const router = Router();
  const client = tg.requireRole('client');
  // A retry with the same Idempotency-Key files no task twice.
  const message = [validateBody(emailMessageSchema), tg.idempotencyKey];
  const gate = [tg.toolRun(), tg.requireTool('email_analyzer')];

  router.post('/agents/:id/email/analyze', client, ...message, ...gate, async (req, res) => {
    res.json(await analyzeEmail(tg.email, currentRun(req), bodyOf(req, emailMessageSchema)));
  });

  router.post('/agents/:id/workflows/email', client, ...message, ...gate, async (req, res) => {
    res.json(await runEmailWorkflow(tg.email, currentRun(req), bodyOf(req, emailMessageSchema)));
  });
  return router;
}

export const emailRoutes = describeRoutes('Email', [
  {
    method: 'post',
    path: '/agents/:id/email/analyze',
    summary: 'Analyze a message',
    description: 'Gate: email_analyzer (403 tool_forbidden when not offered to the sender\'s run). Enhancement: task_creator files one task per action item when offered.',
    roles: ['client'],
    body: emailMessageSchema,
    success: { status: 200, description: 'The analysis, and the tasks filed', schema: analyzeResponse },
    errors: ['sender_forbidden', 'tool_forbidden', 'approval_required', 'cap_exceeded', 'upstream_error'],
    idempotent: true,
  },
  {
    method: 'post',
    path: '/agents/:id/workflows/email',
    summary: 'Run the three-stage email workflow',
    description: 'Gate: email_analyzer (analysis). Enhancements: task_creator (tasks) and reply_generator (the reply; without it, the analysis\'s suggested reply).',
    roles: ['client'],
    body: emailMessageSchema,
    success: { status: 200, description: 'Each stage, the analysis, the tasks and the reply', schema: workflowResponse },
    errors: ['sender_forbidden', 'tool_forbidden', 'approval_required', 'cap_exceeded', 'upstream_error'],
    idempotent: true,
  },
]);
