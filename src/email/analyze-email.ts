// POST /email/analyze as a story: the gate tool email_analyzer analyzes the message; the
// enhancement task_creator files its action items as tasks when offered, and is skipped otherwise.
import { modelContext, orUpstreamError } from '../llm/language-model';
import type { EmailAnalysis } from '../llm/email-analysis';
import type { ToolRun } from '../run/tool-run';
import type { TaskView } from '../tasks/task-store';
import type { EmailDeps } from './email-deps';
import { fileTasks } from './file-tasks';
import { modelEmail, type EmailMessage } from '../http/email-message';

export interface AnalyzeEmailResult {
  routing_key: string | null;
  analysis: EmailAnalysis;
  tasks: TaskView[];
  tools: { email_analyzer: 'used'; task_creator: 'used' | 'skipped' };
}

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
