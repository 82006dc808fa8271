// POST /workflows/email as a story, three stages: analysis (gate: email_analyzer), tasks
// (enhancement: task_creator) and the reply (enhancement: reply_generator, else the analysis's
// suggested reply). Each stage reports what it did; a stage that is skipped or falls back says so.
import { z } from 'zod';
import { isModelError, modelContext } from '../llm/language-model';
import { emailAnalysisSchema, type EmailAnalysis } from '../llm/email-analysis';
import type { ToolRun } from '../run/tool-run';
import { taskViewSchema, type TaskView } from '../tasks/task-store';
import { runAnalysis } from './analyze-email';
import type { EmailDeps } from './email-deps';
import { fileTasks } from './file-tasks';
import { modelEmail, type EmailMessage } from '../http/email-message';

export const stageNameSchema = z.enum(['analysis', 'tasks', 'reply']);
export const stageStatusSchema = z.enum(['completed', 'skipped', 'fallback', 'failed']);
export type StageStatus = z.infer<typeof stageStatusSchema>;

const stageSchema = z.object({
  name: stageNameSchema,
  tool: z.string(),
  status: stageStatusSchema,
  /** Why a stage failed, for the caller; the tool-call record has it too. */
  error: z.string().optional(),
});
export type Stage = z.output<typeof stageSchema>;

export const replySourceSchema = z.enum(['reply_agent', 'analysis_fallback']);

const replySchema = z.object({ text: z.string(), source: replySourceSchema });
export type Reply = z.output<typeof replySchema>;

export const emailWorkflowResultSchema = z.object({
  routing_key: z.string().nullable(),
  stages: z.array(stageSchema),
  analysis: emailAnalysisSchema,
  tasks: z.array(taskViewSchema),
  reply: replySchema,
});
export type EmailWorkflowResult = z.output<typeof emailWorkflowResultSchema>;

export async function runEmailWorkflow(deps: EmailDeps, run: ToolRun, message: EmailMessage): Promise<EmailWorkflowResult> {
  const analysis = await runAnalysis(deps, run, message);
  const stages: Stage[] = [{ name: 'analysis', tool: 'email_analyzer', status: 'completed' }];

  // From here a tool has run: a later stage that toolgate itself cannot carry out (its database,
  // most often) is reported as failed, never a 5xx whose retry would file the tasks again (SEMANTICS §13).
  let tasks: TaskView[] = [];
  try {
    const filed = await fileTasks(deps, run, message, analysis);
    tasks = filed ?? [];
    stages.push({ name: 'tasks', tool: 'task_creator', status: filed ? 'completed' : 'skipped' });
  } catch (err) {
    stages.push({ name: 'tasks', tool: 'task_creator', status: 'failed', error: run.fault(err, 'email workflow: tasks') });
  }

  const written = await writeReply(deps, run, message, analysis);
  stages.push(written.stage);

  return { routing_key: run.routingKey, stages, analysis, tasks, reply: written.reply };
}

async function writeReply(
  deps: EmailDeps,
  run: ToolRun,
  message: EmailMessage,
  analysis: EmailAnalysis,
): Promise<{ stage: Stage; reply: Reply }> {
  const fallback: Reply = { text: analysis.suggested_reply, source: 'analysis_fallback' };
  try {
    if (!run.grants('reply_generator')) {
      await run.skip('reply_generator');
      return { stage: { name: 'reply', tool: 'reply_generator', status: 'fallback' }, reply: fallback };
    }
    const text = await run.dispatch('reply_generator', () =>
      deps.model.writeReply(modelEmail(message), analysis, modelContext(run.agent, deps.now())),
    );
    return { stage: { name: 'reply', tool: 'reply_generator', status: 'completed' }, reply: { text, source: 'reply_agent' } };
  } catch (err) {
    // The reply agent failing is a failed stage, not a failed workflow: the analysis's reply stands in.
    return {
      stage: {
        name: 'reply',
        tool: 'reply_generator',
        status: 'failed',
        error: isModelError(err) ? err.message : run.fault(err, 'email workflow: reply'),
      },
      reply: fallback,
    };
  }
}
