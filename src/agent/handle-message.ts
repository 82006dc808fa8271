// POST /messages and POST /runs as stories: find or start the thread, read its history, record the
// run as it starts, run the agent, record how it ended. The run was resolved (access rules, then
// gates) before any of this, by toolRun(); a refused sender never gets here.
import type { AgentTurn, InboundMessage } from '../llm/agent-step';
import type { ToolRun } from '../run/tool-run';
import { runAgent, type AgentRunDeps, type CurrentTurn } from './agent-run';
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

/** How many of a thread's latest messages (with their runs) the model reads as history. */
export const HISTORY_RUNS = 20;

export async function handleMessage(deps: AgentRunsDeps, run: ToolRun, request: { thread_id?: number; message: InboundMessage }): Promise<RunResult> {
  const { thread_id, message } = request;
  // The thread must be this agent's (a 404 otherwise) before its history is read.
  const history = thread_id === undefined ? [] : historyOf(await deps.store.threadRuns((await deps.store.thread(run.agentId, thread_id)).id, HISTORY_RUNS));
  return record(deps, run, { thread: thread_id ?? { subject: message.subject ?? null }, message }, history, { role: 'inbound', message });
}

export async function handleInstruction(deps: AgentRunsDeps, run: ToolRun, instruction: string): Promise<RunResult> {
  return record(deps, run, { thread: null, message: { instruction } }, [], { role: 'instruction', text: instruction });
}

/** Records the run as it starts, runs the agent, records how it ended. */
async function record(deps: AgentRunsDeps, run: ToolRun, start: Pick<Parameters<RunStore['start']>[0], 'thread' | 'message'>, history: AgentTurn[], current: CurrentTurn): Promise<RunResult> {
  const started = await deps.store.start({ ...start, agent_id: run.agentId, run: run.run.kind, routing_key: run.routingKey, tools_offered: run.tools });
  const end = await runAgent(deps, run, history, current);
  await deps.store.complete(started.id, end);
  return { run_id: started.id, ...(started.thread_id !== null ? { thread_id: started.thread_id } : {}), ...resultOf(run, end) };
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
