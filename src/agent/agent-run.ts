// An agent run as a story (SEMANTICS §10): the run was resolved once, before this; the model is
// offered exactly its tools; every call the model makes goes through the one dispatch path, so a
// tool the run was not offered is refused there, recorded, and its refusal given back to the model
// as that call's result; the run goes on until the model replies or a bound stops it.
//
// Approvals (SEMANTICS §12): a call the run may only request is filed as a request, and the model
// reads "awaiting approval, request R". A sender who may decide a request pending in the thread is
// offered approve_request and deny_request; such a sender asking for the very call a pending request
// asks (same tool, same input) decides that request instead of running the tool anew.
import type { ApprovalRequestView, Decider } from '../core/approval-request';
import type { ApprovalService, Decision } from '../approvals/approvals';
import { canonicalJson } from '../core/canonical-json';
import { toolIdSchema } from '../core/types';
import { CapExceededError, HttpError, NotDispatchableError, ValidationError } from '../errors';
import type { AgentToolCall, AgentToolSpec, AgentTurn, DecidableRequest, InboundMessage } from '../llm/agent-step';
import { isModelError, modelContext, type LanguageModel } from '../llm/language-model';
import { NOT_OFFERED, type CallOrigin, type ToolRun } from '../run/tool-run';
import type { ToolRegistry } from '../tools/tool-registry';
import { cutText } from './history';
import { boundedJson, type StepView, type Stopped } from './run-store';
import type { AgentRunLimits } from '../option-bounds';
import { APPROVE_REQUEST, decideInput, describeRequest, isSystemTool, systemToolSpecs } from './system-tools';

export interface AgentRunDeps {
  model: LanguageModel;
  registry: Pick<ToolRegistry, 'spec'>;
  limits: AgentRunLimits;
  approvals: ApprovalService;
  now(): Date;
}

/** Where a run happens, for the requests it files and decides. */
export interface RunScope extends CallOrigin {
  /** The thread's reference, for a sender run in a thread. */
  thread_reference: string | null;
  /** Requests pending in the thread that this run's sender may decide. */
  decidable: readonly ApprovalRequestView[];
  /** Requests approved in the thread: each ran its call, which no later call runs again. */
  approved: readonly ApprovalRequestView[];
  /** The request ids the message names in its own text ("request 7"). */
  named: readonly number[];
}

/** How a run ended: its steps, its reply, why it stopped; whether it asked to copy the escalation address; what it decided. */
export interface RunEnd {
  steps: readonly StepView[];
  reply: string | null;
  stopped: Stopped;
  error: string | null;
  escalate: boolean;
  decided: readonly ApprovalRequestView[];
}

/** The most of one message, and of one tool result, that a model reads in a run. */
export const MESSAGE_CHARS = 20_000;
const RESULT_CHARS = 8_000;

/** The message at hand: a sender's email in a thread, or a scheduled instruction. */
export type CurrentTurn = Extract<AgentTurn, { role: 'inbound' } | { role: 'instruction' }>;

export async function runAgent(
  deps: AgentRunDeps,
  run: ToolRun,
  scope: RunScope,
  history: readonly AgentTurn[],
  current: CurrentTurn,
): Promise<RunEnd> {
  const context = modelContext(run.agent, deps.now());
  const message = current.role === 'inbound' ? current.message : undefined;
  const state: RunState = { run, deps, scope, message, decidable: [...scope.decidable], decided: [] };
  const turns: AgentTurn[] = [...history, cutCurrent(current)];
  const steps: StepView[] = [];
  const end = (rest: Pick<RunEnd, 'reply' | 'stopped' | 'error'>, escalate = false): RunEnd => ({
    steps,
    ...rest,
    escalate,
    decided: state.decided,
  });

  for (let step = 0; step < deps.limits.maxSteps; step++) {
    let answer;
    try {
      // The catalogue is the run's resolved set (the check at dispatch reads the very same set),
      // and the system tools while a request it may decide is pending.
      answer = await deps.model.agentStep({ context, tools: catalogue(state), turns, decidable: state.decidable.map(decidableOf) });
    } catch (err) {
      if (isModelError(err))
        return end({ reply: null, stopped: 'model_error', error: `The language model failed (${err.kind}): ${err.message}` });
      // toolgate's own fault, or a host model's that is no ModelError: as for a call, below.
      if (!acted(steps)) throw err;
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
        if (!acted(steps)) throw err;
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
  deps: AgentRunDeps;
  scope: RunScope;
  message: InboundMessage | undefined;
  /** Still pending and this sender's to decide: shrinks as the run decides. */
  decidable: ApprovalRequestView[];
  decided: ApprovalRequestView[];
}

function catalogue(state: RunState): AgentToolSpec[] {
  const { run, deps } = state;
  const tools = run.tools.flatMap((id) => {
    const spec = deps.registry.spec(id);
    if (!spec) return [];
    return run.needsApproval(id) ? [{ ...spec, needs_approval: true }] : [spec];
  });
  return state.decidable.length > 0 ? [...tools, ...systemToolSpecs(state.decidable.map(decidableOf))] : tools;
}

/**
 * One call, as a step, in dispatch's order: offered, then input, then the tool. What the model got
 * wrong (a name that is no tool, a tool it was not offered, arguments that are not JSON or do not
 * fit the tool) is a step it reads back; only toolgate's own faults (the database) end the request.
 */
async function callTool(state: RunState, call: AgentToolCall): Promise<StepView> {
  const { run, scope } = state;
  const { input, json } = argumentsOf(call.arguments);
  // Offered when the run began with a request to decide: a later call says what became of it.
  if (isSystemTool(call.tool) && scope.decidable.length > 0) return decideByMessage(state, call.tool, input, json);
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
  // Exactly what an approved request ran, asked again (a model rereading the thread, an approver's
  // second "approved"): it ran once, as approved, and does not run, nor get filed, again.
  const ran = sameCall([...scope.approved, ...state.decided.filter((r) => r.status === 'approved')], call.tool, input);
  if (ran) {
    return {
      tool: call.tool,
      input,
      status: 'failure',
      approval_request_id: ran.id,
      error: `Request ${ran.id} already ran exactly this call, once, as approved: it is not run again. An operator can run it again if it must.`,
    };
  }
  try {
    if (state.decidable.length > 0) run.validate(call.tool, input);
    const pending = sameCall(state.decidable, call.tool, input);
    if (pending) return decideStep(state, call.tool, input, pending.id, 'approve');
    const outcome = await run.callTool(call.tool, input, { message: state.message, origin: scope });
    switch (outcome.status) {
      case 'success':
        return { tool: call.tool, input, status: 'success', output: outcome.output };
      case 'failure':
        return { tool: call.tool, input, status: 'failure', error: outcome.error };
      default:
        return {
          tool: call.tool,
          input,
          status: 'pending_approval',
          approval_request_id: outcome.request.id,
          output: {
            request_id: outcome.request.id,
            status: 'awaiting_approval',
            note: `Awaiting approval, request ${outcome.request.id}: it did not run, and runs once, as asked, only if an approver approves it.`,
          },
        };
    }
  } catch (err) {
    if (err instanceof ValidationError)
      return { tool: call.tool, input, status: 'failure', error: `The input does not fit the tool: ${err.message}. Nothing ran.` };
    // Over a cap: refused and recorded at dispatch like any refusal, and given back to the model.
    if (err instanceof CapExceededError) return { tool: call.tool, input, status: 'denied', error: err.message };
    if (err instanceof NotDispatchableError) return { tool: call.tool, input, status: 'failure', error: err.message };
    throw err;
  }
}

/** approve_request or deny_request: which request, that the message names it when several wait, then the decision. */
async function decideByMessage(state: RunState, tool: string, input: unknown, json: boolean): Promise<StepView> {
  const parsed = json ? decideInput.safeParse(input) : null;
  if (!parsed?.success)
    return {
      tool,
      input,
      status: 'failure',
      error: 'The input does not fit the tool: give {"request_id": <the request\'s number>}. Nothing was decided.',
    };
  const id = parsed.data.request_id;
  if (!state.decidable.some((r) => r.id === id)) {
    return {
      tool,
      input,
      status: 'failure',
      error: `Request ${id} is not pending in this thread for this sender to decide: nothing was decided. Pending: ${pendingList(state)}.`,
    };
  }
  // With several requests waiting, only the one the message names: a model may not pick for the approver.
  if (state.decidable.length > 1 && !state.scope.named.includes(id)) {
    return {
      tool,
      input,
      status: 'failure',
      error: `Several requests are pending in this thread and the message does not name request ${id}: nothing was decided. Pending: ${pendingList(state)}.`,
    };
  }
  return decideStep(state, tool, input, id, tool === APPROVE_REQUEST ? 'approve' : 'deny');
}

/** Decides a pending request as this run's sender, and the step that tells the model what came of it. */
async function decideStep(state: RunState, tool: string, input: unknown, id: number, decision: Decision): Promise<StepView> {
  const { run, scope } = state;
  const decider: Decider = { via: 'message', routing_key: run.routingKey ?? '' };
  try {
    const decided = await state.deps.approvals.decide(run.agentId, id, decision, decider, scope.thread_reference ?? undefined);
    state.decided.push(decided);
    state.decidable = state.decidable.filter((r) => r.id !== id);
    const output = {
      request_id: decided.id,
      status: decided.status,
      tool: decided.tool,
      input: decided.input,
      ...(decided.result ? { result: decided.result } : {}),
    };
    if (decided.result?.status === 'failure')
      return {
        tool,
        input,
        status: 'failure',
        approval_request_id: id,
        output,
        error: `Request ${id} was approved and ran, and ${decided.tool} failed: ${decided.result.error}`,
      };
    return { tool, input, status: 'success', approval_request_id: id, output };
  } catch (err) {
    // Decided meanwhile (409), or no longer this sender's to decide (403): the model reads why.
    if (err instanceof HttpError && (err.status === 403 || err.status === 404 || err.status === 409)) {
      state.decidable = state.decidable.filter((r) => r.id !== id);
      return { tool, input, status: 'failure', approval_request_id: id, error: err.message };
    }
    throw err;
  }
}

/** The request among these that asks for exactly this call (its input as asked), if any. */
function sameCall(requests: readonly ApprovalRequestView[], tool: string, input: unknown): ApprovalRequestView | undefined {
  if (requests.length === 0) return undefined;
  const wanted = canonicalJson(input);
  return requests.find((r) => r.tool === tool && canonicalJson(r.input) === wanted);
}

function pendingList(state: RunState): string {
  return state.decidable.map((r) => describeRequest(decidableOf(r))).join('; ') || 'none';
}

function decidableOf(request: ApprovalRequestView): DecidableRequest {
  return { id: request.id, tool: request.tool, input: request.input, requested_by: request.requested_by.routing_key };
}

/**
 * Whether a step acted: a tool may have run (it succeeded, or failed: a tool that threw ran; a
 * decided request is a success), or a call was filed as an approval request. After that, the answer
 * must say what happened, and the run is never undone.
 */
export function acted(steps: readonly StepView[]): boolean {
  return steps.some((s) => s.status === 'success' || s.status === 'failure' || s.status === 'pending_approval');
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
