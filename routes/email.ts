// Email (client): analysis, gated by email_analyzer with task_creator as an enhancement; and the
// three-stage workflow, which adds reply_generator.
import { Router } from 'express';
import { bodyOf, validateBody } from '../middleware/validate-body';
import { currentRun } from '../middleware/tool-run';
import { analyzeEmail } from '../src/email/analyze-email';
import { runEmailWorkflow } from '../src/email/email-workflow';
import { emailMessageSchema } from '../src/email/message';
import type { RouteServices } from './route-services';

export function emailRouter(tg: Pick<RouteServices, 'email' | 'requireRole' | 'requireTool' | 'toolRun'>): Router {
  const router = Router();
  const client = tg.requireRole('client');
  const message = validateBody(emailMessageSchema);
  const gate = [tg.toolRun(), tg.requireTool('email_analyzer')];

  router.post('/agents/:id/email/analyze', client, message, ...gate, async (req, res) => {
    res.json(await analyzeEmail(tg.email, currentRun(req), bodyOf(req, emailMessageSchema)));
  });

  router.post('/agents/:id/workflows/email', client, message, ...gate, async (req, res) => {
    res.json(await runEmailWorkflow(tg.email, currentRun(req), bodyOf(req, emailMessageSchema)));
  });
  return router;
}
