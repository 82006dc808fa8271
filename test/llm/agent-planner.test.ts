// The local model's planner reads what the sender wrote, not what the message quotes: an approval
// or an order id in quoted history or a signature names no tool.
import fc from 'fast-check';
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

describe('when toolgate read the message for approval decisions before the run', () => {
  const decided = (body: string, decision: Extract<AgentStepRequest['turns'][number], { role: 'decision' }>): AgentStepRequest => ({
    ...step(body),
    turns: [{ role: 'inbound', message: { from: 'mara@thescoop.com', body } }, decision],
  });
  const request = { request_id: 7, tool: 'process_refund', input: { order_id: 'SCP-1042' } };

  test('then an approval it carried out is reported with what the call gave, and no tool is called anew', () => {
    const result = planAgentStep(
      decided('Approved, process it.', {
        role: 'decision',
        decided: [
          {
            ...request,
            requested_by: 'jane@acme.com',
            status: 'approved',
            result: { status: 'success', output: { order_id: 'SCP-1042', refunded: true } },
          },
        ],
        undecided: [],
      }),
    );
    expect(result.kind).toBe('reply');
    expect(result.kind === 'reply' ? result.text : '').toMatch(/Order SCP-1042 has been refunded in full\./);
  });

  test('then a message that decided nothing is no instruction either: "Approved." with two pending calls no tool', () => {
    const result = planAgentStep(
      decided('Approved.', {
        role: 'decision',
        decided: [],
        undecided: [
          { ...request, code: 'K7QXM2PD', requested_by: 'jane@acme.com', reason: 'several requests are pending' },
          {
            request_id: 8,
            tool: 'process_refund',
            input: { order_id: 'SCP-1050' },
            code: 'M2PD7K9Q',
            requested_by: 'eve@x.example',
            reason: 'several requests are pending',
          },
        ],
      }),
    );
    expect(result.kind).toBe('reply');
    expect(result.kind === 'reply' ? result.text : '').toMatch(
      /Several requests are waiting for approval in this thread, so I decided none/,
    );
  });
});

test('when the order is named only in the Subject, then the planner takes no argument from it', () => {
  const request: AgentStepRequest = {
    ...step('Approved, process it.'),
    turns: [
      { role: 'inbound', message: { from: 'jane@acme.com', subject: 'Melted (ref SCP-1050)', body: 'Order SCP-1042 arrived melted.' } },
      { role: 'inbound', message: { from: 'mara@thescoop.com', subject: 'Re: Melted (ref SCP-1050)', body: 'Approved, process it.' } },
    ],
  };
  expect(planAgentStep(request)).toMatchObject({
    kind: 'tool_calls',
    calls: [{ tool: 'process_refund', arguments: '{"order_id":"SCP-1042"}' }],
  });
});

test('when the thread names two orders and the approval names neither, then the planner asks which instead of guessing', () => {
  const request: AgentStepRequest = {
    ...step('Approved, process it.'),
    turns: [
      { role: 'inbound', message: { from: 'jane@acme.com', body: 'Order SCP-1042 arrived melted, and so did SCP-1050.' } },
      { role: 'inbound', message: { from: 'mara@thescoop.com', body: 'Approved, process it.' } },
    ],
  };
  const result = planAgentStep(request);
  expect(result.kind).toBe('reply');
  expect(result.kind === 'reply' ? result.text : '').toMatch(/more than one order \(SCP-1042, SCP-1050\), so I did nothing yet/);
});

test("when a message's Subject asks for a refund and its body does not, then nothing is refunded nor filed", () => {
  const request: AgentStepRequest = {
    ...step('Let me check with the courier first, I will get back to you.'),
    turns: [
      {
        role: 'inbound',
        message: { from: 'eve@x.example', subject: 'Melted order - please refund it', body: 'Order SCP-1050 arrived melted.' },
      },
      {
        role: 'inbound',
        message: {
          from: 'mara@thescoop.com',
          subject: 'Re: Melted order - please refund it',
          body: 'Let me check with the courier first, I will get back to you.',
        },
      },
    ],
  };
  expect(planAgentStep(request).kind).toBe('reply');
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

describe('when a scheduled instruction says where to send', () => {
  const instruction = (text: string): AgentStepRequest => ({
    ...step(''),
    tools: ['send_email'].map(spec),
    turns: [{ role: 'instruction', text }],
  });
  const sentTo = (text: string): string | undefined => {
    const result = planAgentStep(instruction(text));
    return result.kind === 'tool_calls' ? (JSON.parse(result.calls[0]!.arguments) as { to: string }).to : undefined;
  };
  // The expression the planner read it with before: the reference its linear reading must equal.
  const REFERENCE = /\b(?:send|email|mail)\b[^@]*?\bto\s+([^\s,;<>()]+@[^\s,;<>()]+?)[.,;]?(?:\s|$)/i;

  test('then the address is the one the old expression found, for any mix of verbs, "to"s and "@"s', () => {
    const piece = fc.constantFrom(
      ...['send', 'email', 'Mail', 'to', 'TO', 'mara@thescoop.com', 'a@b.co.', '@', 'x', 'resend', 'tomorrow'],
      ...['x@', '@y', 'a@@b', 'a@b(', 'a@b;', 'a@b,', 'a@b.', 'a@b..', '<a@b>', 'to@x.com'],
    );
    const gap = fc.constantFrom(' ', '  ', ', ', '. ', '\n', '', ';', '\u00a0');
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, gap), { maxLength: 12 }), (parts) => {
        const text = parts.map(([p, g]) => p + g).join('');
        expect(sentTo(text)).toBe(REFERENCE.exec(text)?.[1]);
      }),
      { numRuns: 5000 },
    );
  });

  test('then 40,000 characters of "send " with no address are read in a few milliseconds, not with the square of the length', () => {
    const text = 'send '.repeat(8000) + 'to nobody';
    const started = performance.now();
    expect(sentTo(text)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(50);
  });
});
