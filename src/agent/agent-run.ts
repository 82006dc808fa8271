// An agent run as a story (SEMANTICS §10): the run was resolved once, before this; the model is
// offered exactly its tools; every call the model makes goes through the one dispatch path, so a
// tool the run was not offered is refused there, recorded, and its refusal given back to the model
// as that call's result; the run goes on until the model replies or a bound stops it.
//
// Approvals (SEMANTICS §12, §12a): a call the run may only request is filed as a request, and the
// model reads "awaiting approval, request R". No model decides a request: toolgate read the message
// for decisions before the run began (decide-by-message.ts), and the model is told what came of it.
// A call asking exactly what a request pending in the thread asks does not run, whoever makes it: it
// is that request, which runs only on an approver's decision.
import type { ApprovalRequestView } from '../core/approval-request';
import { canonicalJson } from '../core/canonical-json';
import { toolIdSchema } from '../core/types';
import type { AgentToolCall, AgentToolSpec, AgentTurn, InboundMessage } from '../llm/agent-step';
import { isModelError, modelContext, type LanguageModel } from '../llm/language-model';
import { NOT_OFFERED, type CallOrigin, type ToolRun } from '../run/tool-run';
import type { ToolRegistry } from '../tools/tool-registry';
import type { ToolgateTracing, TracedRun } from '../tracing/toolgate-tracing';
import { cutText } from './history';
import { boundedJson, type RunEnd, type StepView } from './run-store';
import type { AgentRunLimits } from '../option-bounds';
import { hasDecisions, type RunDecisions } from '../core/run-decisions';

/** What the run loop needs (runAgent): the model, the tools' specs, the bounds, the clock. */
export interface AgentLoopDeps {
  model: LanguageModel;
  registry: Pick<ToolRegistry, 'spec'>;
  limits: AgentRunLimits;
  now(): Date;
  /** Where the run becomes an `invoke_agent` span, its tool calls' spans beneath it (SEMANTICS §16). */
  tracing?: ToolgateTracing;
}

/** Where a run happens, for the requests it files and decides. */
export interface RunScope extends CallOrigin {
  /** Requests still pending in the thread: a call asking exactly what one asks is that request, and does not run. */
  pending: readonly ApprovalRequestView[];
  /** Requests approved in the thread: each ran its call, which no later call runs again. */
  approved: readonly ApprovalRequestView[];
  /** What toolgate read in the message for decisions, before the model ran. */
  decisions: RunDecisions;
}

/** The most of one message, and of one tool result, that a model reads in a run. */
export const MESSAGE_CHARS = 20_000;
const RESULT_CHARS = 8_000;

/** The message at hand: a sender's email in a thread, or a scheduled instruction. */
export type CurrentTurn = Extract<AgentTurn, { role: 'inbound' } | { role: 'instruction' }>;

export async function runAgent(
  deps: AgentLoopDeps,
  run: ToolRun,
  scope: RunScope,
  history: readonly AgentTurn[],
  current: CurrentTurn,
): Promise<RunEnd> {
  if (deps.tracing === undefined) return modelSteps(deps, run, scope, history, current);
  const traced: TracedRun = {
    agent: run.agent,
    kind: run.kind,
    routingKey: run.routingKey,
    policyVersion: run.compiled.version,
    tools: run.tools,
    threadId: scope.thread_id,
    text: current.role === 'inbound' ? current.message.body : current.text,
  };
  return deps.tracing.agentRun(traced, () => modelSteps(deps, run, scope, history, current));
}

async function modelSteps(
  deps: AgentLoopDeps,
  run: ToolRun,
  scope: RunScope,
  history: readonly AgentTurn[],
  current: CurrentTurn,
): Promise<RunEnd> {
  const context = modelContext(run.agent, deps.now());
  const message = current.role === 'inbound' ? current.message : undefined;
  const state: RunState = { run, scope, message, requested: [] };
  const decisions = scope.decisions;
  // The model reads the decisions as toolgate's word, right after the message they were read in.
  const turns: AgentTurn[] = [
    ...history,
    cutCurrent(current),
    ...(hasDecisions(decisions) ? [{ role: 'decision' as const, ...decisions }] : []),
  ];
  const steps: StepView[] = [];
  const end = (rest: Pick<RunEnd, 'reply' | 'stopped' | 'error'>, escalate = false): RunEnd => ({
    steps,
    ...rest,
    escalate,
    decisions,
    requested: state.requested,
  });
  const actedSoFar = () => acted({ steps, decisions });

  for (let step = 0; step < deps.limits.maxSteps; step++) {
    let answer;
    try {
      // The catalogue is the run's resolved set: the check at dispatch reads the very same set.
      answer = await deps.model.agentStep({ context, tools: catalogue(run, deps), turns });
    } catch (err) {
      if (isModelError(err))
        return end({ reply: null, stopped: 'model_error', error: `The language model failed (${err.kind}): ${err.message}` });
      // toolgate's own fault, or a host model's that is no ModelError: as for a call, below.
      if (!actedSoFar()) throw err;
      return end({ reply: null, stopped: 'error', error: `Stopped after a tool ran: ${run.fault(err, 'agent run model step')}` });
    }
    if (answer.kind === 'reply') return end({ reply: answer.text, stopped: 'reply', error: null }, answer.escalate === true);

    if (steps.length + answer.calls.length > deps.limits.maxToolCalls) {
      return end({
        reply: null,
        stopped: 'max_steps',
        error: `Stopped: the model asked for more than ${deps.limits.maxToolCalls} tool calls, the most one run may make.`,
      });
    }
    // Calls made together are one message of the model's, then their results, in its order.
    for (const call of answer.calls) turns.push({ role: 'tool_call', call_id: call.call_id, tool: call.tool, arguments: call.arguments });
    for (const call of answer.calls) {
      let done: StepView;
      try {
        done = await callTool(state, call);
      } catch (err) {
        // toolgate's own fault (the database, most often). Once a tool has run, the answer must
        // say what ran, not be a 5xx that invites a retry to run it again.
        if (!actedSoFar()) throw err;
        return end({ reply: null, stopped: 'error', error: `Stopped after a tool ran: ${state.run.fault(err, 'agent run step')}` });
      }
      steps.push(done);
      turns.push({
        role: 'tool_result',
        call_id: call.call_id,
        tool: call.tool,
        status: done.status,
        output: done.output === undefined ? undefined : boundedJson(done.output, RESULT_CHARS),
        error: done.error,
      });
    }
  }
  return end({
    reply: null,
    stopped: 'max_steps',
    error: `Stopped: no reply after ${deps.limits.maxSteps} model steps, the most one run may take.`,
  });
}

interface RunState {
  run: ToolRun;
  scope: RunScope;
  message: InboundMessage | undefined;
  /** The requests this run's calls filed, or found pending: the reply tells approvers their codes. */
  requested: ApprovalRequestView[];
}

function catalogue(run: ToolRun, deps: AgentLoopDeps): AgentToolSpec[] {
  return run.tools.flatMap((id) => {
    const spec = deps.registry.spec(id);
    if (!spec) return [];
    return run.needsApproval(id) ? [{ ...spec, needs_approval: true }] : [spec];
  });
}

/**
 * One call, as a step, in dispatch's order: offered, then input, then the tool. What the model got
 * wrong (a name that is no tool, a tool it was not offered, arguments that are not JSON or do not
 * fit the tool) is a step it reads back; only toolgate's own faults (the database) end the request.
 */
async function callTool(state: RunState, call: AgentToolCall): Promise<StepView> {
  const { run, scope } = state;
  const { input, json } = argumentsOf(call.arguments);
  // A name that is not a tool id cannot have been offered; it is refused without a record, whose
  // tool_id column holds ids only.
  if (!toolIdSchema.safeParse(call.tool).success) {
    return { tool: call.tool, input, status: 'denied', error: 'No tool has this name: refused at dispatch, nothing ran.' };
  }
  // What the thread already answers for a tool the run holds: the call's own door refuses (and
  // records) one it does not hold, whatever its arguments.
  const answered = run.offers(call.tool) ? threadAnswer(state, call.tool, input, json) : undefined;
  if (answered !== undefined) return answered;
  // The location keeps the words a model has read in a refused call's step since the first release.
  const step = await run.call(call.tool, input, { message: state.message, origin: scope, inputAt: ['body', 'input'] });
  switch (step.status) {
    case 'success':
      return { tool: call.tool, input, status: 'success', output: step.output };
    case 'failure':
      return { tool: call.tool, input, status: 'failure', error: step.error };
    case 'pending_approval':
      return awaiting(state, call.tool, input, step.request);
    case 'refused':
      return { tool: call.tool, input, status: 'denied', error: NOT_OFFERED };
    case 'over_cap':
      // Refused and recorded at dispatch like any refusal, and given back to the model.
      return { tool: call.tool, input, status: 'denied', error: step.error.message };
    case 'invalid':
      return { tool: call.tool, input, status: 'failure', error: `The input does not fit the tool: ${step.error.message}. Nothing ran.` };
    case 'not_dispatchable':
      return { tool: call.tool, input, status: 'failure', error: step.error.message };
  }
}

/**
 * The step of a call the run holds that is not dispatched at all: arguments that are not JSON; a
 * call exactly as an approved request ran it (a model rereading the thread, an approver's second
 * "approved"), which ran once and does not run, nor get filed, again; or exactly what a request
 * pending here asks, even from an approver's run (calling it is not deciding it: a model that picks
 * which of two requests to run would be deciding for the approver). None: the call is dispatched.
 */
function threadAnswer(state: RunState, tool: string, input: unknown, json: boolean): StepView | undefined {
  const { scope } = state;
  if (!json) return { tool, input, status: 'failure', error: 'The arguments are not valid JSON: nothing ran.' };
  const ran = sameCall([...scope.approved, ...approvedNow(scope.decisions)], tool, input);
  if (ran) {
    return {
      tool,
      input,
      status: 'failure',
      approval_request_id: ran.id,
      error: `Request ${ran.id} already ran exactly this call, once, as approved: it is not run again. An operator can run it again if it must.`,
    };
  }
  const pending = sameCall(
    scope.pending.filter((r) => !scope.decisions.decided.some((d) => d.request_id === r.id)),
    tool,
    input,
  );
  return pending ? awaiting(state, tool, input, pending) : undefined;
}

/** The step of a call that is an approval request (filed now, or pending already): it did not run. */
function awaiting(state: RunState, tool: string, input: unknown, request: ApprovalRequestView): StepView {
  if (!state.requested.some((r) => r.id === request.id)) state.requested.push(request);
  return {
    tool,
    input,
    status: 'pending_approval',
    approval_request_id: request.id,
    output: {
      request_id: request.id,
      status: 'awaiting_approval',
      note: `Awaiting approval, request ${request.id}: it did not run, and runs once, as asked, only if an approver approves it.`,
    },
  };
}

/** The requests this message approved (before the model ran), as requests whose call ran. */
function approvedNow(decisions: RunDecisions): { id: number; tool: string; input: unknown }[] {
  return decisions.decided.filter((d) => d.status === 'approved').map((d) => ({ id: d.request_id, tool: d.tool, input: d.input }));
}

/** The request among these that asks for exactly this call (its input as asked), if any. */
function sameCall<R extends { tool: string; input: unknown }>(requests: readonly R[], tool: string, input: unknown): R | undefined {
  if (requests.length === 0) return undefined;
  const wanted = canonicalJson(input);
  return requests.find((r) => r.tool === tool && canonicalJson(r.input) === wanted);
}

/**
 * Whether a run acted: a step's tool may have run (it succeeded, or failed: a tool that threw ran),
 * a call was filed as an approval request, or the message decided a request. After that, the answer
 * must say what happened, and the run is never undone.
 */
export function acted(end: Pick<RunEnd, 'steps' | 'decisions'>): boolean {
  return (
    end.decisions.decided.length > 0 ||
    end.steps.some((s) => s.status === 'success' || s.status === 'failure' || s.status === 'pending_approval')
  );
}

/** The message at hand as the model reads it: a body or an instruction past MESSAGE_CHARS is cut. */
function cutCurrent(current: CurrentTurn): CurrentTurn {
  if (current.role === 'instruction') return { role: 'instruction', text: cutText(current.text, MESSAGE_CHARS) };
  return { role: 'inbound', message: { ...current.message, body: cutText(current.message.body, MESSAGE_CHARS) } };
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
