// Handling a message (handleMessage, handleInstruction) on fakes: runs and threads kept in memory
// (RunRecords), a scripted model, the real ToolRun over in-memory records (test/support/fake-run.ts)
// and the real compiled policy. Who the reply goes to, what a redelivery gets, and what is undone or
// kept when something fails; no database, no HTTP.
import type { ApprovalService } from '../../src/approvals/approvals';
import { handleInstruction, handleMessage, type MessageHandlingDeps } from '../../src/agent/handle-message';
import type { HandledMessage, RunEnd } from '../../src/agent/run-store';
import type { ThreadRef } from '../../src/agent/thread-store';
import type { AgentStepResult, InboundMessage } from '../../src/llm/agent-step';
import type { LanguageModel } from '../../src/llm/language-model';
import { MessageIdReusedError } from '../../src/errors';
import { AGENT, attachment, fakes, runOf } from '../support/fake-run';

/** What handling reads and writes of runs and their threads: the store a handling is given. */
type RunRecords = Parameters<typeof handleMessage>[0]['store'];

interface StoredRun {
  id: number;
  thread: ThreadRef | null;
  message_id: string | null;
  routing_key: string | null;
  digest: string | null;
  end?: RunEnd;
  reply?: { to: string[]; cc: string[]; participants: readonly string[] } | null;
  answer?: unknown;
}

/** Runs and threads in memory, as RunStore and ThreadStore keep them; `failComplete` makes writing a run's end fail. */
function memoryRecords(options: { failComplete?: boolean } = {}) {
  const runs: StoredRun[] = [];
  const abandoned: number[] = [];
  let threads = 0;
  const records: RunRecords = {
    threads: {
      byReference: async () => null,
      byMessageIds: async () => null,
    },
    handled: async (_agentId, messageId): Promise<HandledMessage | null> => {
      const run = runs.find((r) => r.message_id === messageId && !abandoned.includes(r.id));
      if (!run) return null;
      return {
        origin: 'inbound',
        routing_key: run.routing_key,
        content_digest: run.digest,
        answer: run.answer ?? null,
        holder_alive: true,
        run: { completed_at: run.end ? '2026-12-06T12:00:01Z' : null } as HandledMessage['run'],
      };
    },
    releaseMessageId: async () => null,
    history: async () => [],
    start: async (row) => {
      const thread =
        row.thread === null
          ? null
          : 'id' in row.thread
            ? row.thread
            : { id: ++threads, reference: `thr_${threads}`, participants: new Set<string>() };
      const run: StoredRun = {
        id: runs.length + 1,
        thread,
        message_id: row.message_id,
        routing_key: row.routing_key,
        digest: row.content_digest ?? null,
      };
      runs.push(run);
      return { id: run.id, thread };
    },
    complete: async (row, end, reply, answer) => {
      if (options.failComplete) throw new Error('database gone');
      const run = runs.find((r) => r.id === row.id)!;
      Object.assign(run, { end, reply, answer });
    },
    abandon: async (id) => void abandoned.push(id),
  };
  return { records, runs, abandoned };
}

function scriptedModel(answers: AgentStepResult[]): LanguageModel {
  return { agentStep: async () => answers.shift() ?? { kind: 'reply', text: '(no more answers)' } } as Pick<
    LanguageModel,
    'agentStep'
  > as LanguageModel;
}

/** Approvals are never read here (no attachment needs approval): touching them fails the test. */
const UNTOUCHED = new Proxy({} as ApprovalService, {
  get: (_target, name) => {
    throw new Error(`approvals.${String(name)} was read`);
  },
});

function handlingDeps(records: RunRecords, model: LanguageModel): MessageHandlingDeps<RunRecords> {
  return {
    model,
    registry: { spec: (id) => ({ id, display_name: id, summary: id, input_schema: { type: 'object' } }) },
    limits: { maxSteps: 8, maxToolCalls: 16, historyChars: 32_000 },
    now: () => new Date('2026-12-06T12:00:00Z'),
    store: records,
    approvals: UNTOUCHED,
    messageIdDomain: 'toolgate.test',
  };
}

const MESSAGE: InboundMessage = {
  from: 'Mara <mara@thescoop.com>',
  subject: 'Order SCP-1',
  body: 'Where is my order SCP-1?',
  message_id: '<m-1@thescoop.com>',
};
const lookup = (order: string): AgentStepResult => ({
  kind: 'tool_calls',
  calls: [{ call_id: 'c1', tool: 'lookup_order', arguments: JSON.stringify({ order }) }],
});
const reply = (text: string): AgentStepResult => ({ kind: 'reply', text });

describe('when a sender writes a new message', () => {
  test('then it runs in a new thread, and the reply goes to the From, with its Message-ID on the agent’s domain', async () => {
    const { records, runs } = memoryRecords();
    const { deps } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const handled = await handleMessage(handlingDeps(records, scriptedModel([lookup('SCP-1'), reply('On its way.')])), run, {
      message: MESSAGE,
    });
    expect(handled.replayed).toBe(false);
    expect(handled.answer).toMatchObject({
      run_id: 1,
      thread_id: 'thr_1',
      stopped: 'reply',
      steps: [{ tool: 'lookup_order', status: 'success' }],
    });
    expect(handled.answer.reply).toMatchObject({ text: 'On its way.', to: ['Mara <mara@thescoop.com>'], cc: [] });
    expect(handled.answer.reply.message_id).toMatch(/@toolgate\.test>$/);
    expect(runs[0]!.reply?.participants).toEqual(['mara@thescoop.com']);
  });

  test('then a call the run was refused copies the agent’s escalation address on the reply', async () => {
    const { records } = memoryRecords();
    const { deps } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    Object.assign(run.agent, { escalation_address: 'ops@thescoop.com' });
    const refused: AgentStepResult = {
      kind: 'tool_calls',
      calls: [{ call_id: 'c1', tool: 'issue_refund', arguments: '{"order":"SCP-1"}' }],
    };
    try {
      const handled = await handleMessage(handlingDeps(records, scriptedModel([refused, reply('I have passed this on.')])), run, {
        message: MESSAGE,
      });
      expect(handled.answer.steps).toMatchObject([{ tool: 'issue_refund', status: 'denied' }]);
      expect(handled.answer.reply.cc).toEqual(['ops@thescoop.com']);
    } finally {
      Object.assign(AGENT, { escalation_address: null });
    }
  });

  test('then an automatic reply is kept, and nothing runs or answers it', async () => {
    const { records, runs } = memoryRecords();
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const handled = await handleMessage(handlingDeps(records, scriptedModel([lookup('SCP-1')])), run, {
      message: { ...MESSAGE, subject: 'Out of office', auto_submitted: 'auto-replied' },
    });
    expect(handled.answer).toMatchObject({ stopped: 'auto_reply', steps: [], tools_offered: [], reply: { text: '', to: [] } });
    expect(events).toEqual([]);
    expect(runs).toHaveLength(1);
  });
});

describe('when the same message is delivered again', () => {
  test('then the redelivery gets the first answer and runs nothing', async () => {
    const { records } = memoryRecords();
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const first = await handleMessage(handlingDeps(records, scriptedModel([lookup('SCP-1'), reply('On its way.')])), run, {
      message: MESSAGE,
    });
    const ran = events.length;
    const again = await handleMessage(handlingDeps(records, scriptedModel([lookup('SCP-1'), reply('Again?')])), run, { message: MESSAGE });
    expect(again).toEqual({ answer: first.answer, replayed: true });
    expect(events).toHaveLength(ran);
  });

  test('then the same Message-ID with other content is refused, and nothing runs', async () => {
    const { records } = memoryRecords();
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    await handleMessage(handlingDeps(records, scriptedModel([reply('On its way.')])), run, { message: MESSAGE });
    await expect(
      handleMessage(handlingDeps(records, scriptedModel([lookup('SCP-2')])), run, {
        message: { ...MESSAGE, body: 'Refund SCP-2 instead.' },
      }),
    ).rejects.toBeInstanceOf(MessageIdReusedError);
    expect(events).toEqual([]);
  });
});

describe('when something fails', () => {
  test('then a run that fails before anything acted is undone, so its retry runs anew', async () => {
    const { records, abandoned } = memoryRecords();
    const { deps } = fakes({ start: async () => Promise.reject(new Error('database gone')) });
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    await expect(handleMessage(handlingDeps(records, scriptedModel([lookup('SCP-1')])), run, { message: MESSAGE })).rejects.toThrow(
      'database gone',
    );
    expect(abandoned).toEqual([1]);
    expect(await records.handled(AGENT.id, '<m-1@thescoop.com>')).toBeNull();
  });

  test('then a run whose end cannot be written after a tool ran still answers what ran, as stopped by an error', async () => {
    const { records, abandoned } = memoryRecords({ failComplete: true });
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps);
    const handled = await handleMessage(handlingDeps(records, scriptedModel([lookup('SCP-1'), reply('On its way.')])), run, {
      message: MESSAGE,
    });
    expect(handled.answer).toMatchObject({ stopped: 'error', steps: [{ tool: 'lookup_order', status: 'success' }] });
    expect(handled.answer.error).toMatch(/^The run's end could not be recorded after a tool ran: /);
    expect(abandoned).toEqual([]);
    expect(events.filter((e) => e.kind === 'ran')).toHaveLength(1);
  });
});

describe('when the scheduler gives an instruction', () => {
  test('then it runs with no thread and no reply addressees, and answers with its steps', async () => {
    const { records, runs } = memoryRecords();
    const { deps } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'], { allow_proactive: true })] }, deps, { kind: 'scheduled' });
    const answer = await handleInstruction(handlingDeps(records, scriptedModel([lookup('SCP-1'), reply('Checked.')])), run, 'Check SCP-1.');
    expect(answer).toMatchObject({
      run_id: 1,
      run: 'scheduled',
      routing_key: null,
      stopped: 'reply',
      reply: { text: 'Checked.', to: [], cc: [] },
    });
    expect(answer).not.toHaveProperty('thread_id');
    expect(runs[0]!.thread).toBeNull();
  });
});
