// The agent loop (runAgent) on fakes: a scripted model, the real ToolRun over in-memory records
// (test/support/fake-run.ts), the real compiled policy. What the model is offered, what each of its
// calls comes to and what it reads back, and how the loop ends; no database, no HTTP.
import type { ApprovalRequestView } from '../../src/core/approval-request';
import { NO_DECISIONS } from '../../src/core/run-decisions';
import { acted, runAgent, type AgentLoopDeps, type RunScope } from '../../src/agent/agent-run';
import type { AgentStepRequest, AgentStepResult, AgentToolCall, AgentToolSpec, AgentTurn } from '../../src/llm/agent-step';
import { ModelError, type LanguageModel } from '../../src/llm/language-model';
import { attachment, fakes, runOf } from '../support/fake-run';

/** A model that answers each step with the next of `answers`, and keeps what each step was given. */
function scriptedModel(answers: (AgentStepResult | Error)[]) {
  const asked: AgentStepRequest[] = [];
  const model: Pick<LanguageModel, 'agentStep'> = {
    agentStep: async (request) => {
      // The turns as they stood at this step: the loop goes on adding to its own list.
      asked.push({ ...request, turns: [...request.turns] });
      const next = answers.shift();
      if (next === undefined) throw new Error('the script has no more answers');
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return { model: model as LanguageModel, asked };
}

const call = (tool: string, args: unknown, id = `c-${tool}`): AgentToolCall => ({
  call_id: id,
  tool,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});
const calls = (...c: AgentToolCall[]): AgentStepResult => ({ kind: 'tool_calls', calls: c });
const reply = (text: string): AgentStepResult => ({ kind: 'reply', text });

const spec = (id: string): AgentToolSpec => ({ id, display_name: id, summary: `The ${id} tool.`, input_schema: { type: 'object' } });

function loopDeps(model: LanguageModel, limits: Partial<AgentLoopDeps['limits']> = {}): AgentLoopDeps {
  return {
    model,
    registry: { spec },
    limits: { maxSteps: 8, maxToolCalls: 16, historyChars: 32_000, ...limits },
    now: () => new Date('2026-12-06T12:00:00Z'),
  };
}

const SCOPE: RunScope = { thread_id: 3, run_id: 5, message_id: '<m1@thescoop.com>', pending: [], approved: [], decisions: NO_DECISIONS };
const MESSAGE = { role: 'inbound' as const, message: { from: 'mara@thescoop.com', subject: 'Order', body: 'Where is SCP-1?' } };

function request(id: number, tool: string, input: unknown): ApprovalRequestView {
  return { id, tool, input, status: 'pending' } as unknown as ApprovalRequestView;
}

const results = (turns: readonly AgentTurn[]) => turns.filter((t) => t.role === 'tool_result');

describe('when the model is offered the run', () => {
  test('then its catalogue is exactly the run’s tools, a tool it may only request marked as such', async () => {
    const { deps } = fakes();
    const run = runOf(
      { attachments: [attachment(1, ['lookup_order']), attachment(2, ['issue_refund'], { approvers: ['boss@thescoop.com'] })] },
      deps,
    );
    const { model, asked } = scriptedModel([reply('Done.')]);
    await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(asked[0]!.tools.map((t) => [t.id, t.needs_approval === true])).toEqual([
      ['issue_refund', true],
      ['lookup_order', false],
    ]);
  });
});

describe('when the model calls a tool the run is offered', () => {
  test('then it runs once under its record, and the model reads its output as that call’s result before replying', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model, asked } = scriptedModel([calls(call('lookup_order', { order: 'SCP-1' })), reply('It is on its way.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(events.map((e) => e.kind)).toEqual(['start', 'ran', 'complete']);
    expect(end).toMatchObject({ reply: 'It is on its way.', stopped: 'reply', error: null });
    expect(end.steps).toEqual([{ tool: 'lookup_order', input: { order: 'SCP-1' }, status: 'success', output: { found: 'SCP-1' } }]);
    expect(results(asked[1]!.turns)).toEqual([
      {
        role: 'tool_result',
        call_id: 'c-lookup_order',
        tool: 'lookup_order',
        status: 'success',
        output: { found: 'SCP-1' },
        error: undefined,
      },
    ]);
  });

  test('then arguments that are not JSON are a failed step the model reads, and nothing is written or run', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('lookup_order', '{order: SCP-1')), reply('Sorry.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end.steps).toEqual([
      { tool: 'lookup_order', input: '{order: SCP-1', status: 'failure', error: 'The arguments are not valid JSON: nothing ran.' },
    ]);
    expect(events).toEqual([]);
  });

  test('then an input the tool refuses is a failed step naming the field, and nothing is written or run', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('lookup_order', { order: '' })), reply('Sorry.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end.steps[0]).toMatchObject({
      status: 'failure',
      error: expect.stringMatching(/^The input does not fit the tool: body\.input\.order: .*\. Nothing ran\.$/),
    });
    expect(events).toEqual([]);
  });

  test('then a tool with no implementation here is a failed step, and nothing is written', async () => {
    const { deps, events } = fakes({ implementation: () => undefined });
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('lookup_order', { order: 'SCP-1' })), reply('Sorry.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end.steps[0]).toMatchObject({ tool: 'lookup_order', status: 'failure' });
    expect(events).toEqual([]);
  });

  test('then a call over its cap is a denied step with the cap in words, and a denied record', async () => {
    const { deps, events } = fakes({ start: async () => null });
    const cap = { tool_id: 'lookup_order', per: 'sender' as const, limit: 2, window_s: 86_400 };
    const run = runOf({ attachments: [attachment(1, ['lookup_order'], { caps: [cap] })] }, deps);
    const { model } = scriptedModel([calls(call('lookup_order', { order: 'SCP-1' })), reply('Later.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end.steps[0]).toMatchObject({
      status: 'denied',
      error: expect.stringContaining('over its cap: at most 2 calls per sender per'),
    });
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'lookup_order', status: 'denied' } }]);
  });
});

describe('when the model calls a tool the run is not offered', () => {
  test('then it is a denied step with one denied record, whatever its arguments, and the run goes on', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('issue_refund', 'not json at all')), reply('I cannot refund that.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end.steps).toEqual([
      {
        tool: 'issue_refund',
        input: 'not json at all',
        status: 'denied',
        error: 'Not offered to this run: refused at dispatch, nothing ran.',
      },
    ]);
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'issue_refund', status: 'denied' } }]);
    expect(end.stopped).toBe('reply');
  });

  test('then a name that is no tool id is a denied step with no record at all', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('Drop Table!', {})), reply('Done.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end.steps[0]).toMatchObject({ status: 'denied', error: 'No tool has this name: refused at dispatch, nothing ran.' });
    expect(events).toEqual([]);
  });
});

describe('when the model calls a tool the run may only request', () => {
  test('then the call is filed once as a request with its input, the model reads that it awaits approval, and the run lists it', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['issue_refund'], { approvers: ['boss@thescoop.com'] })] }, deps);
    const { model } = scriptedModel([calls(call('issue_refund', { order: 'SCP-9' })), reply('Asked for approval.')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(events).toEqual([{ kind: 'file', detail: { tool: 'issue_refund', attachment: 1, input: { order: 'SCP-9' } } }]);
    expect(end.steps[0]).toMatchObject({ status: 'pending_approval', approval_request_id: 1, output: { status: 'awaiting_approval' } });
    expect(end.requested.map((r) => r.id)).toEqual([1]);
  });

  test('then a call asking exactly what a pending request asks is that request: nothing is filed or run', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['issue_refund'], { approvers: ['boss@thescoop.com'] })] }, deps);
    const scope = { ...SCOPE, pending: [request(42, 'issue_refund', { order: 'SCP-9' })] };
    const { model } = scriptedModel([calls(call('issue_refund', { order: 'SCP-9' })), reply('Still waiting.')]);
    const end = await runAgent(loopDeps(model), run, scope, [], MESSAGE);
    expect(end.steps[0]).toMatchObject({ status: 'pending_approval', approval_request_id: 42 });
    expect(events).toEqual([]);
  });

  test('then a call exactly as an approved request ran it does not run again', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const scope = { ...SCOPE, approved: [request(41, 'lookup_order', { order: 'SCP-1' })] };
    const { model } = scriptedModel([calls(call('lookup_order', { order: 'SCP-1' })), reply('Already done.')]);
    const end = await runAgent(loopDeps(model), run, scope, [], MESSAGE);
    expect(end.steps[0]).toMatchObject({
      status: 'failure',
      approval_request_id: 41,
      error: expect.stringContaining('already ran exactly this call'),
    });
    expect(events).toEqual([]);
  });
});

describe('when the run meets a bound or a fault', () => {
  test('then more calls than a run may make stop it before any of them runs', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const three = calls(
      call('lookup_order', { order: 'A' }, '1'),
      call('lookup_order', { order: 'B' }, '2'),
      call('lookup_order', { order: 'C' }, '3'),
    );
    const { model } = scriptedModel([three]);
    const end = await runAgent(loopDeps(model, { maxToolCalls: 2 }), run, SCOPE, [], MESSAGE);
    expect(end).toMatchObject({ stopped: 'max_steps', reply: null, error: expect.stringContaining('more than 2 tool calls') });
    expect(events).toEqual([]);
  });

  test('then a model that never replies is stopped after the most steps a run may take', async () => {
    const { deps } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model, asked } = scriptedModel([calls(call('lookup_order', { order: 'A' })), calls(call('lookup_order', { order: 'B' }))]);
    const end = await runAgent(loopDeps(model, { maxSteps: 2 }), run, SCOPE, [], MESSAGE);
    expect(asked).toHaveLength(2);
    expect(end).toMatchObject({ stopped: 'max_steps', error: expect.stringContaining('no reply after 2 model steps') });
    expect(end.steps).toHaveLength(2);
  });

  test('then a model error ends the run as model_error, with the steps made so far', async () => {
    const { deps } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('lookup_order', { order: 'A' })), new ModelError('timeout', 'no answer in 30 s')]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end).toMatchObject({ stopped: 'model_error', error: expect.stringContaining('no answer in 30 s') });
    expect(end.steps).toHaveLength(1);
  });

  test('then a record that cannot be written before anything ran is thrown, so the request fails and can be retried', async () => {
    const { deps } = fakes({ start: async () => Promise.reject(new Error('database gone')) });
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('lookup_order', { order: 'A' }))]);
    await expect(runAgent(loopDeps(model), run, SCOPE, [], MESSAGE)).rejects.toThrow('database gone');
  });

  test('then the same fault after a tool ran ends the run saying what ran, instead of inviting a retry', async () => {
    let starts = 0;
    const { deps, events } = fakes({
      start: async () => {
        starts += 1;
        if (starts > 1) throw new Error('database gone');
        return 101;
      },
    });
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const { model } = scriptedModel([calls(call('lookup_order', { order: 'A' }, '1'), call('lookup_order', { order: 'B' }, '2'))]);
    const end = await runAgent(loopDeps(model), run, SCOPE, [], MESSAGE);
    expect(end).toMatchObject({ stopped: 'error', reply: null, error: expect.stringMatching(/^Stopped after a tool ran: /) });
    expect(end.steps).toHaveLength(1);
    expect(acted(end)).toBe(true);
    expect(events.filter((e) => e.kind === 'ran')).toHaveLength(1);
  });
});
