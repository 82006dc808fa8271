// POST /messages and POST /runs as stories: find or start the thread, read its history, record the
// run as it starts, run the agent, record how it ended. The run was resolved (access rules, then
// gates) before any of this, by toolRun(); a refused sender never gets here.
import type { AgentTurn, InboundMessage } from '../llm/agent-step';
import type { ToolRun } from '../run/tool-run';
import { runAgent, type AgentRunDeps } from './agent-run';
import type { AgentRunView, RunStore, StepView, Stopped } from './run-store';

export interface AgentRunsDeps extends AgentRunDeps {
  store: RunStore;
}

export interface RunResult {
  run_id: number;
  thread_id?: number;
  run: 'sender' | 'scheduled';
  routing_key: string | null;
  tools_offered: string[];
  steps: StepView[];
  reply: { text: string };
  stopped: Stopped;
  /** Why the run stopped without a reply, when it did. */
  error?: string;
}

export async function handleMessage(deps: AgentRunsDeps, run: ToolRun, request: { thread_id?: number; message: InboundMessage }): Promise<RunResult> {
  const threadId = request.thread_id !== undefined ? (await deps.store.thread(run.agentId, request.thread_id)).id : await deps.store.createThread(run.agentId, request.message.subject ?? null);
  const history = request.thread_id !== undefined ? historyOf(await deps.store.threadRuns(threadId)) : [];
  const message = request.message;
  const runId = await deps.store.start({ agent_id: run.agentId, thread_id: threadId, run: 'sender', message, routing_key: run.routingKey, tools_offered: run.tools });
  const end = await runAgent(deps, run, history, { role: 'inbound', message });
  await deps.store.complete(runId, end);
  return { run_id: runId, thread_id: threadId, ...resultOf(run, end) };
}

export async function handleInstruction(deps: AgentRunsDeps, run: ToolRun, instruction: string): Promise<RunResult> {
  const runId = await deps.store.start({ agent_id: run.agentId, thread_id: null, run: 'scheduled', message: { instruction }, routing_key: null, tools_offered: run.tools });
  const end = await runAgent(deps, run, [], { role: 'instruction', text: instruction });
  await deps.store.complete(runId, end);
  return { run_id: runId, ...resultOf(run, end) };
}

function resultOf(run: ToolRun, end: Awaited<ReturnType<typeof runAgent>>): Omit<RunResult, 'run_id' | 'thread_id'> {
  return {
    run: run.run.kind,
    routing_key: run.routingKey,
    tools_offered: [...run.tools],
    steps: [...end.steps],
    reply: { text: end.reply ?? '' },
    stopped: end.stopped,
    ...(end.error ? { error: end.error } : {}),
  };
}

/**
 * A thread's earlier runs as the model reads them: each message, the tool calls made for it with
 * their results (refusals included, as the model was told), and the reply. The tools of this run
 * still come from this run's sender alone: history is text, never a grant.
 */
export function historyOf(runs: readonly AgentRunView[]): AgentTurn[] {
  return runs.flatMap((past) => {
    const turns: AgentTurn[] = ['instruction' in past.message ? { role: 'instruction', text: past.message.instruction } : { role: 'inbound', message: past.message }];
    past.steps.forEach((step, i) => {
      const call_id = `run${past.id}_${i}`;
      turns.push({ role: 'tool_call', call_id, tool: step.tool, arguments: typeof step.input === 'string' ? step.input : JSON.stringify(step.input ?? {}) });
      turns.push({ role: 'tool_result', call_id, tool: step.tool, status: step.status, output: step.output, error: step.error });
    });
    if (past.reply) turns.push({ role: 'reply', text: past.reply.text });
    return turns;
  });
}
