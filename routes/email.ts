// Email (client): analysis, gated by email_analyzer with task_creator as an enhancement; and the
// three-stage workflow, which adds reply_generator. A retry with the same Idempotency-Key files no
// task twice.
import { currentRun } from '../middleware/current-run';
import { analyzeEmail, analyzeEmailResultSchema } from '../src/email/analyze-email';
import { emailWorkflowResultSchema, runEmailWorkflow } from '../src/email/email-workflow';
import { emailMessageSchema } from '../src/http/email-message';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

type EmailServices = Pick<RouteServices, 'email' | 'requireTool' | 'toolRun'>;
// What the two routes share: a client's message, gated by email_analyzer, safe to retry.
const gatedMessage = {
  roles: ['client'],
  body: emailMessageSchema,
  errors: ['sender_forbidden', 'tool_forbidden', 'approval_required', 'cap_exceeded', 'upstream_error'],
  idempotent: true,
  // Ported from the legacy API: a refusal says its sentence, which its clients match on.
  use: (tg: EmailServices) => [tg.toolRun(), tg.requireTool('email_analyzer', { legacySentence: true })],
} as const;

export const emailRoutes = routeSection<EmailServices>('Email', (route) => [
  route({
    method: 'post',
    path: '/agents/:id/email/analyze',
    summary: 'Analyze a message',
    description:
      "Gate: email_analyzer (403 tool_forbidden when not offered to the sender's run). Enhancement: task_creator files one task per action item when offered.",
    ...gatedMessage,
    success: { status: 200, description: 'The analysis, and the tasks filed', schema: analyzeEmailResultSchema },
    handle: (tg, { req, body }) => analyzeEmail(tg.email, currentRun(req), body),
  }),
  route({
    method: 'post',
    path: '/agents/:id/workflows/email',
    summary: 'Run the three-stage email workflow',
    description:
      "Gate: email_analyzer (analysis). Enhancements: task_creator (tasks) and reply_generator (the reply; without it, the analysis's suggested reply).",
    ...gatedMessage,
    success: { status: 200, description: 'Each stage, the analysis, the tasks and the reply', schema: emailWorkflowResultSchema },
    handle: (tg, { req, body }) => runEmailWorkflow(tg.email, currentRun(req), body),
  }),
]);
