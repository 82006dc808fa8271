// POST /email/analyze as a story: the gate tool email_analyzer analyzes the message; the
// enhancement task_creator files its action items as tasks when offered, and is skipped otherwise.
import { z } from 'zod';
import { modelContext, orUpstreamError } from '../llm/language-model';
import { emailAnalysisSchema, type EmailAnalysis } from '../llm/email-analysis';
import type { ToolRun } from '../run/tool-run';
import { taskViewSchema } from '../tasks/task-store';
import type { EmailDeps } from './email-deps';
import { fileTasks } from './file-tasks';
import { modelEmail, type EmailMessage } from '../http/email-message';

export const analyzeEmailResultSchema = z.object({
  routing_key: z.string().nullable(),
  analysis: emailAnalysisSchema,
  tasks: z.array(taskViewSchema),
  tools: z.object({ email_analyzer: z.literal('used'), task_creator: z.enum(['used', 'skipped']) }),
});
export type AnalyzeEmailResult = z.output<typeof analyzeEmailResultSchema>;

export async function analyzeEmail(deps: EmailDeps, run: ToolRun, message: EmailMessage): Promise<AnalyzeEmailResult> {
  const analysis = await runAnalysis(deps, run, message);
  const tasks = await fileTasks(deps, run, message, analysis);
  return {
    routing_key: run.routingKey,
    analysis,
    tasks: tasks ?? [],
    tools: { email_analyzer: 'used', task_creator: tasks ? 'used' : 'skipped' },
  };
}

/**
 * The gate stage shared by analyze and the workflow: a model that fails is a 502, never a 500,
 * and the failure is recorded by the dispatch.
 */
export function runAnalysis(deps: EmailDeps, run: ToolRun, message: EmailMessage): Promise<EmailAnalysis> {
  return orUpstreamError(
    run.dispatch('email_analyzer', () => deps.model.analyzeEmail(modelEmail(message), modelContext(run.agent, deps.now()))),
  );
}
