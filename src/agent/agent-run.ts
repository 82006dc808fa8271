// An agent run as a story (SEMANTICS §10): the run was resolved once, before this; the model is
// offered exactly its tools; every call the model makes goes through the one dispatch path, so a
// tool the run was not offered is refused there, recorded, and its refusal given back to the model
// as that call's result; the run goes on until the model replies or a bound stops it.
import { toolIdSchema } from '../core/types';
import { NotDispatchableError, ValidationError } from '../errors';
import type { AgentToolCall, AgentTurn, InboundMessage } from '../llm/agent-step';
import { isModelError, modelContext, type LanguageModel } from '../llm/language-model';
import type { ToolRun } from '../run/tool-run';
import type { ToolRegistry } from '../tools/tool-registry';
import type { RunEnd, StepView } from './run-store';

export interface AgentRunLimits {
  /** The most model steps (answers) one run may take. */
  maxSteps: number;
  /** The most tool calls one run may make, over all its steps. */
  maxToolCalls: number;
}

export interface AgentRunDeps {
  model: LanguageModel;
  registry: Pick<ToolRegistry, 'spec'>;
  limits: AgentRunLimits;
  now(): Date;
}

/** The message at hand: a sender's email in a thread, or a scheduled instruction. */
export type CurrentTurn = Extract<AgentTurn, { role: 'inbound' } | { role: 'instruction' }>;

export async function runAgent(deps: AgentRunDeps, run: ToolRun, history: readonly AgentTurn[], current: CurrentTurn): Promise<RunEnd> {
  // The catalogue is the run's resolved set: the check at dispatch reads the very same set.
  const tools = run.tools.flatMap((id) => deps.registry.spec(id) ?? []);
  const context = modelContext(run.agent, deps.now());
  const message = current.role === 'inbound' ? current.message : undefined;
  const turns: AgentTurn[] = [...history, current];
  const steps: StepView[] = [];

  for (let step = 0; step < deps.limits.maxSteps; step++) {
    let answer;
    try {
      answer = await deps.model.agentStep({ context, tools, turns });
    } catch (err) {
      if (!isModelError(err)) throw err;
      return { steps, reply: null, stopped: 'model_error', error: `The language model failed (${err.kind}): ${err.message}` };
    }
    if (answer.kind === 'reply') return { steps, reply: answer.text, stopped: 'reply', error: null };

    if (steps.length + answer.calls.length > deps.limits.maxToolCalls) {
      return { steps, reply: null, stopped: 'max_steps', error: `Stopped: the model asked for more than ${deps.limits.maxToolCalls} tool calls, the most one run may make.` };
    }
    // Calls made together are one message of the model's, then their results, in its order.
    for (const call of answer.calls) turns.push({ role: 'tool_call', call_id: call.call_id, tool: call.tool, arguments: call.arguments });
    for (const call of answer.calls) {
      const done = await callTool(run, call, message);
      steps.push(done);
      turns.push({ role: 'tool_result', call_id: call.call_id, tool: call.tool, status: done.status, output: done.output, error: done.error });
    }
  }
  return { steps, reply: null, stopped: 'max_steps', error: `Stopped: no reply after ${deps.limits.maxSteps} model steps, the most one run may take.` };
}

/**
 * One call, as a step, in dispatch's order: offered, then input, then the tool. What the model got
 * wrong (a name that is no tool, a tool it was not offered, arguments that are not JSON or do not
 * fit the tool) is a step it reads back; only toolgate's own faults (the database) end the request.
 */
async function callTool(run: ToolRun, call: AgentToolCall, message: InboundMessage | undefined): Promise<StepView> {
  const { input, json } = argumentsOf(call.arguments);
  // A name that is not a tool id cannot have been offered; it is refused without a record, whose
  // tool_id column holds ids only.
  if (!toolIdSchema.safeParse(call.tool).success) {
    return { tool: call.tool, input, status: 'denied', error: 'No tool has this name: refused at dispatch, nothing ran.' };
  }
  // Refused and recorded whatever its arguments: malformed ones must not skip the denied record.
  if (!run.offers(call.tool)) {
    await run.refuse(call.tool);
    return { tool: call.tool, input, status: 'denied', error: NOT_OFFERED };
  }
  if (!json) return { tool: call.tool, input, status: 'failure', error: 'The arguments are not valid JSON: nothing ran.' };
  try {
    const outcome = await run.callTool(call.tool, input, { message });
    return outcome.status === 'success' ? { tool: call.tool, input, status: 'success', output: outcome.output } : { tool: call.tool, input, status: 'failure', error: outcome.error };
  } catch (err) {
    if (err instanceof ValidationError) return { tool: call.tool, input, status: 'failure', error: `The input does not fit the tool: ${err.message}. Nothing ran.` };
    if (err instanceof NotDispatchableError) return { tool: call.tool, input, status: 'failure', error: err.message };
    throw err;
  }
}

/** The call's arguments as JSON (none is `{}`), or as the text given when they are not JSON. */
function argumentsOf(text: string): { input: unknown; json: boolean } {
  if (text.trim() === '') return { input: {}, json: true };
  try {
    return { input: JSON.parse(text), json: true };
  } catch {
    return { input: text, json: false };
  }
}

const NOT_OFFERED = 'Not offered to this run: refused at dispatch, nothing ran.';
