// The task_creator step shared by analysis and the workflow: an enhancement, so a run it is not
// offered to skips it (recorded as skipped) instead of failing.
import type { EmailAnalysis } from '../llm/email-analysis';
import type { ToolRun } from '../run/tool-run';
import type { TaskView } from '../tasks/task-store';
import type { EmailDeps } from './email-deps';
import { taskSource, type EmailMessage } from '../http/email-message';

/** The tasks filed from the analysis's action items, or null when task_creator was skipped. */
export async function fileTasks(deps: EmailDeps, run: ToolRun, message: EmailMessage, analysis: EmailAnalysis): Promise<TaskView[] | null> {
  if (!run.grants('task_creator')) {
    await run.skip('task_creator');
    return null;
  }
  return run.dispatch('task_creator', () => deps.tasks.createTasksFromActionItems(run.agentId, analysis.action_items, taskSource(message)));
}
