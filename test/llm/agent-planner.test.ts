// The local model's planner reads what the sender wrote, not what the message quotes: an approval
// or an order id in quoted history or a signature names no tool.
import type { AgentStepRequest, AgentToolSpec } from '../../src/llm/agent-step';
import { planAgentStep } from '../../src/llm/local/agent-planner';

const spec = (id: string): AgentToolSpec => ({ id, display_name: id, summary: id, input_schema: { type: 'object' } });

const step = (body: string): AgentStepRequest => ({
  context: { agentName: 'Sundae', systemPrompt: null, now: new Date('2026-11-30T09:00:00Z') },
  tools: ['lookup_order', 'process_refund', 'document_search'].map(spec),
  turns: [{ role: 'inbound', message: { from: 'mara@thescoop.com', body } }],
});

test("when an order id and an approval are in the sender's own words, then the planner calls process_refund for it", () => {
  expect(planAgentStep(step('Approved, process the refund for SCP-1042.'))).toMatchObject({
    kind: 'tool_calls',
    calls: [{ tool: 'process_refund', arguments: '{"order_id":"SCP-1042"}' }],
  });
});

test('when the approval and the order id are only in the quoted message, then the planner calls no tool', () => {
  const body =
    'Thanks, noted.\n\nOn Mon, Nov 30, 2026 at 9:00 AM Jane <jane@acme.com> wrote:\n> Approved, process the refund for SCP-1042.';
  expect(planAgentStep(step(body)).kind).toBe('reply');
});

test('when the message ends with a question, then document_search is asked the last sentence only', () => {
  const result = planAgentStep(step('We love your shop. Do melted pints get refunded?'));
  expect(result).toMatchObject({
    kind: 'tool_calls',
    calls: [{ tool: 'document_search', arguments: JSON.stringify({ query: 'Do melted pints get refunded?' }) }],
  });
});

describe('when an approver writes about a request pending in the thread', () => {
  const deciding = (body: string): AgentStepRequest => ({
    ...step(body),
    tools: ['lookup_order', 'approve_request', 'deny_request'].map(spec),
    decidable: [{ id: 7, tool: 'process_refund', input: { order_id: 'SCP-1042' }, requested_by: 'jane@acme.com' }],
  });

  test.each([
    ['Approved, process it.', 'approve_request'],
    ['Not approved.', 'deny_request'],
    ['Denied.', 'deny_request'],
  ])('then %j decides it: %s', (body, tool) => {
    expect(planAgentStep(deciding(body))).toMatchObject({ kind: 'tool_calls', calls: [{ tool, arguments: '{"request_id":7}' }] });
  });

  test('then a message that both approves and refuses decides nothing, and the reply asks which', () => {
    const result = planAgentStep(deciding('Approved: the courier refused the return, so please process it.'));
    expect(result.kind).toBe('reply');
    expect(result.kind === 'reply' ? result.text : '').toMatch(/both approves and refuses, so I decided nothing/);
  });
});

test('when the thread shows the order refunded and this sender may refund, then an approval calls nothing and says it was done', () => {
  const request: AgentStepRequest = {
    ...step('Approved, process it.'),
    turns: [
      { role: 'inbound', message: { from: 'jane@acme.com', body: 'Order SCP-1042 arrived melted.' } },
      { role: 'tool_call', call_id: 'c1', tool: 'process_refund', arguments: '{"order_id":"SCP-1042"}' },
      {
        role: 'tool_result',
        call_id: 'c1',
        tool: 'process_refund',
        status: 'success',
        output: '{"order_id":"SCP-1042","refunded":true,"amount_cents":1899}',
      },
      { role: 'inbound', message: { from: 'mara@thescoop.com', body: 'Approved, process it.' } },
    ],
  };
  const result = planAgentStep(request);
  expect(result.kind).toBe('reply');
  expect(result.kind === 'reply' ? result.text : '').toMatch(/SCP-1042 was already refunded in this thread/);
});
