// POST /messages and POST /runs as stories: find the thread the message names, join it only as one
// of its participants (SEMANTICS §11), read its bounded history, record the run as it starts, run
// the agent, address the reply and record how it ended. The run was resolved (access rules, then
// gates) before any of this, by toolRun(); a refused sender never gets here.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ApprovalService } from '../approvals/approvals';
import { routingKeysOf } from '../core/address-list';
import { isAutomaticReply } from '../core/automatic-reply';
import { messageIdsOf, newMessageId, normalizeMessageId } from '../core/message-ids';
import { InFlightError, MessageIdReusedError, NotFoundError } from '../errors';
import type { InboundMessage } from '../llm/agent-step';
import { ownText } from '../llm/local/email-text';
import type { ToolRun } from '../run/tool-run';
import { acted, runAgent, type AgentLoopDeps, type CurrentTurn, type RunScope } from './agent-run';
import { approvalNotice } from './approval-notice';
import { decideByMessage } from './decide-by-message';
import { historyOf } from './history';
import { decidedRequestSchema, NO_DECISIONS, undecidedRequestSchema } from '../core/run-decisions';
import {
  MessageIdTaken,
  type AgentRunView,
  type HandledMessage,
  newThreadSchema,
  stepViewSchema,
  stoppedSchema,
  type NewThread,
  type ReplyView,
  type RunEnd,
  type RunStore,
} from './run-store';
import type { ThreadRef, ThreadStore } from './thread-store';
import { dispatchKindSchema } from '../core/types';

/** What handling reads and writes of runs and their threads: RunStore's part of it (a fake's, in a unit test). */
export type RunRecords = Pick<RunStore, 'handled' | 'releaseMessageId' | 'history' | 'start' | 'complete' | 'abandon'> & {
  readonly threads: Pick<ThreadStore, 'byReference' | 'byMessageIds'>;
};

/** What handling a message or an instruction needs: the loop's, and where runs are recorded and approvals decided. */
export interface MessageHandlingDeps<S extends RunRecords = RunStore> extends AgentLoopDeps {
  store: S;
  /** Decides the requests an approver's message decides, before the model runs. */
  approvals: ApprovalService;
  /** The domain of the Message-IDs the agent's replies get. */
  messageIdDomain: string;
}

/** A run's answer: what the model did, what came of it, and the reply to send. */
export const runResultSchema = z.object({
  run_id: z.number().int(),
  thread_id: z.string().optional().describe("the thread's reference (opaque); absent for a scheduled run"),
  new_thread: newThreadSchema
    .optional()
    .describe('present when the message named a thread it could not join: it was handled in this new thread, with no history'),
  run: dispatchKindSchema,
  routing_key: z.string().nullable(),
  tools_offered: z.array(z.string()),
  needs_approval: z.array(z.string()).describe('the offered tools this run could only request'),
  steps: z.array(stepViewSchema),
  decided: z
    .array(decidedRequestSchema)
    .optional()
    .describe(
      "the approval requests this message decided: read by toolgate in the approver's own text before the model ran, never by a model",
    ),
  undecided: z
    .array(undecidedRequestSchema)
    .optional()
    .describe('the requests pending in the thread that this sender may decide and the message did not, each with its code and why'),
  reply: z.object({
    text: z.string().describe('empty when the run stopped without a reply'),
    message_id: z
      .string()
      .nullable()
      .describe("the reply's own Message-ID, for the relay that sends it; null when there is no reply to send"),
    to: z.array(z.string()),
    cc: z.array(z.string()).describe('the escalation address when the run passed something on; the requesters of requests it decided'),
  }),
  stopped: stoppedSchema.describe("error: toolgate's own work failed after a tool had run; the steps say what ran"),
  error: z.string().optional().describe('why the run stopped without a reply, or what failed after a tool ran'),
});
export type RunResult = z.output<typeof runResultSchema>;

/** How many of a thread's latest messages (with their runs) the model reads as history. */
export const HISTORY_RUNS = 20;

/** A run's answer, and whether it was the stored answer of an earlier handling (a redelivery). */
export interface Handled {
  answer: RunResult;
  replayed: boolean;
}

/**
 * Handles a message, once (SEMANTICS §13): a message whose Message-ID the agent already handled, from
 * the same sender with the same content, gets that handling's answer and runs nothing; the same id
 * from another sender or with other content is a 422; while the first handling runs, a 409.
 */
export async function handleMessage(
  deps: MessageHandlingDeps<RunRecords>,
  run: ToolRun,
  request: { thread_id?: string; message: InboundMessage },
): Promise<Handled> {
  const messageId = normalizeMessageId(request.message.message_id);
  const digest = contentDigest(run.routingKey, request.message);
  if (messageId !== null) {
    const seen = await deps.store.handled(run.agentId, messageId);
    // A claim made with no routing key (an unauthenticated sender, or none) never keeps a sender
    // with one from their own message: that one takes the id over (a stranger cannot pre-claim it).
    const takeover = seen !== null && seen.origin === 'inbound' && seen.routing_key === null && run.routingKey !== null;
    if (takeover) await deps.store.releaseMessageId(run.agentId, messageId, { unauthenticated: true });
    else if (seen) return replay(seen, run.routingKey, digest);
  }
  try {
    return { answer: await handleNew(deps, run, request, messageId, digest), replayed: false };
  } catch (err) {
    // Another delivery of the same message claimed its id first, between the read above and this run's start.
    if (!(err instanceof MessageIdTaken)) throw err;
    const seen = await deps.store.handled(run.agentId, err.messageId);
    if (!seen) throw err;
    return replay(seen, run.routingKey, digest);
  }
}

async function handleNew(
  deps: MessageHandlingDeps<RunRecords>,
  run: ToolRun,
  request: { thread_id?: string; message: InboundMessage },
  messageId: string | null,
  digest: string,
): Promise<RunResult> {
  const { message } = request;
  const { thread, newThread } = await threadFor(deps.store, run, request);
  // An automatic reply (an out-of-office, a list's notice) is kept in its thread, and nothing more:
  // no model reads it, no tool runs, nothing is decided, and no reply answers it (RFC 3834).
  const ownWords = ownText(message.body).join('\n');
  const automatic = isAutomaticReply({ ...message, own_text: ownWords });
  const history =
    thread && !automatic
      ? historyOf(
          await deps.store.history(thread, { messages: HISTORY_RUNS, messageChars: Math.ceil(deps.limits.historyChars / 4) }),
          deps.limits.historyChars,
        )
      : [];
  const requests = thread && !automatic && run.compiled.hasApprovals ? await deps.approvals.store.inThread(run.agentId, thread.id) : [];
  const pending = requests.filter((r) => r.status === 'pending');
  const decidable = automatic
    ? []
    : pending.filter((r) => run.routingKey !== null && run.compiled.mayDecide(r.attachment_id, run.routingKey));
  const participants = [
    run.routingKey,
    ...routingKeysOf(message.to),
    ...routingKeysOf(message.cc),
    ...routingKeysOf(message.reply_to),
  ].filter((k): k is string => k !== null);
  const started = await deps.store.start({
    agent_id: run.agentId,
    thread: thread ?? { subject: message.subject ?? null },
    run: 'sender',
    message,
    routing_key: run.routingKey,
    tools_offered: automatic ? [] : run.tools,
    run_key: run.runKey,
    participants,
    message_id: messageId,
    content_digest: digest,
    new_thread: newThread,
    shadow: automatic ? null : run.shadow,
  });
  const ran = await running(deps, started.id, async () => {
    if (automatic) return automaticReplyEnd();
    const decisions =
      started.thread && decidable.length > 0
        ? await decideByMessage(deps.approvals, run, started.thread.reference, ownWords, decidable)
        : NO_DECISIONS;
    const scope: RunScope = {
      thread_id: started.thread?.id ?? null,
      run_id: started.id,
      message_id: message.message_id ?? null,
      pending,
      approved: requests.filter((r) => r.status === 'approved'),
      decisions,
    };
    return runAgent(deps, run, scope, history, { role: 'inbound', message });
  });
  const reply = ran.reply === null ? null : addressed(deps, run, message, ran);
  const answer = (end: RunEnd): RunResult => ({
    run_id: started.id,
    ...(started.thread ? { thread_id: started.thread.reference } : {}),
    ...(newThread ? { new_thread: newThread } : {}),
    ...resultOf(run, end, reply),
  });
  return answer(
    await completed(deps, run, { id: started.id, agent_id: run.agentId, thread_id: started.thread?.id ?? null }, ran, reply, answer(ran)),
  );
}

/** How a run that read an automatic reply ends: it did nothing, and sends nothing. */
function automaticReplyEnd(): RunEnd {
  return { steps: [], reply: null, stopped: 'auto_reply', error: null, escalate: false, decisions: NO_DECISIONS, requested: [] };
}

export async function handleInstruction(deps: MessageHandlingDeps<RunRecords>, run: ToolRun, instruction: string): Promise<RunResult> {
  const current: CurrentTurn = { role: 'instruction', text: instruction };
  const started = await deps.store.start({
    agent_id: run.agentId,
    thread: null,
    run: run.kind,
    message: { instruction },
    routing_key: run.routingKey,
    tools_offered: run.tools,
    run_key: run.runKey,
    participants: [],
    message_id: null,
    new_thread: null,
    shadow: run.shadow,
  });
  const scope: RunScope = {
    thread_id: null,
    run_id: started.id,
    message_id: null,
    pending: [],
    approved: [],
    decisions: NO_DECISIONS,
  };
  const ran = await running(deps, started.id, () => runAgent(deps, run, scope, [], current));
  const answer = (end: RunEnd): RunResult => ({ run_id: started.id, ...resultOf(run, end, null) });
  return answer(await completed(deps, run, { id: started.id, agent_id: run.agentId, thread_id: null }, ran, null, answer(ran)));
}

/**
 * Runs the agent for a started run. The agent throws only before any step acted: the run is then
 * undone, so the 5xx that follows lets the retry run it.
 */
async function running(deps: MessageHandlingDeps<RunRecords>, runId: number, work: () => Promise<RunEnd>): Promise<RunEnd> {
  try {
    return await work();
  } catch (err) {
    throw await abandoned(deps, runId, err);
  }
}

/** Undoes a run in which nothing acted, and hands back the error it failed with. */
async function abandoned(deps: MessageHandlingDeps<RunRecords>, runId: number, err: unknown): Promise<unknown> {
  await deps.store.abandon(runId).catch(() => undefined);
  return err;
}

/** The answer a redelivery gets: the first handling's, if it is the same message from the same sender. */
function replay(seen: HandledMessage, routingKey: string | null, digest: string): Handled {
  if (seen.origin !== 'inbound' || seen.routing_key !== routingKey || seen.content_digest !== digest) throw new MessageIdReusedError();
  if (seen.answer !== null) return { answer: seen.answer as RunResult, replayed: true };
  if (seen.run.completed_at === null && seen.holder_alive) throw new InFlightError('message_id_in_flight', 'message_id');
  return { answer: answerOfRun(seen.run), replayed: true };
}

/**
 * A run's answer rebuilt from its row, for one whose answer was not kept: it ended before answers
 * were kept, or its instance died mid-run (it is, or will be, `interrupted`: nothing runs again).
 */
function answerOfRun(view: AgentRunView): RunResult {
  const interrupted = view.completed_at === null;
  return {
    run_id: view.id,
    ...(view.thread_id ? { thread_id: view.thread_id } : {}),
    ...(view.new_thread ? { new_thread: view.new_thread } : {}),
    run: view.run,
    routing_key: view.routing_key,
    tools_offered: view.tools_offered,
    needs_approval: [],
    steps: view.steps,
    ...(view.decisions?.decided.length ? { decided: view.decisions.decided } : {}),
    ...(view.decisions?.undecided.length ? { undecided: view.decisions.undecided } : {}),
    reply: view.reply
      ? { text: view.reply.text, message_id: view.reply.message_id || null, to: view.reply.to, cc: view.reply.cc }
      : { text: '', message_id: null, to: [], cc: [] },
    stopped: interrupted ? 'interrupted' : (view.stopped ?? 'interrupted'),
    ...(interrupted
      ? {
          error:
            'interrupted: the instance handling it stopped before it ended; its tool calls are in the records, and nothing is run again',
        }
      : view.error
        ? { error: view.error }
        : {}),
  };
}

/** What makes a delivery the same message: its sender's routing key, subject and body. */
function contentDigest(routingKey: string | null, message: InboundMessage): string {
  return createHash('sha256')
    .update(JSON.stringify([routingKey, message.subject ?? null, message.body]))
    .digest('hex');
}

/**
 * Records how the run ended. When that cannot be written after a tool ran, the answer still says
 * what ran (`stopped: "error"`); the run's row is left open, and the sweeper closes it.
 */
async function completed(
  deps: MessageHandlingDeps<RunRecords>,
  toolRun: ToolRun,
  row: Parameters<RunStore['complete']>[0],
  end: RunEnd,
  reply: Parameters<RunStore['complete']>[2],
  answer: RunResult,
): Promise<RunEnd> {
  try {
    await deps.store.complete(row, end, reply, answer);
    return end;
  } catch (err) {
    if (!acted(end)) throw await abandoned(deps, row.id, err);
    return {
      ...end,
      stopped: 'error',
      error: `The run's end could not be recorded after a tool ran: ${toolRun.fault(err, 'agent run end')}`,
    };
  }
}

/**
 * The thread the message joins (null: a new one), and why it could not join the one it named. A
 * reference that names no thread of this agent is a 404; a Message-ID the agent does not know
 * starts a new thread, as mail answering a message the agent never saw does.
 */
async function threadFor(
  store: RunRecords,
  run: ToolRun,
  request: { thread_id?: string; message: InboundMessage },
): Promise<{ thread: ThreadRef | null; newThread: NewThread | null }> {
  let named: { thread: ThreadRef; requested: string } | null = null;
  if (request.thread_id !== undefined) {
    const thread = await store.threads.byReference(run.agentId, request.thread_id);
    // Unknown and another agent's look the same: neither names a thread of this agent.
    if (!thread) throw new NotFoundError(`Thread ${request.thread_id} of agent ${run.agentId}`);
    named = { thread, requested: request.thread_id };
  } else {
    const ids = [...messageIdsOf(request.message.in_reply_to), ...[...(request.message.references ?? [])].reverse()];
    const found = await store.threads.byMessageIds(run.agentId, [...new Set(ids)]);
    if (found) named = { thread: found.thread, requested: found.message_id };
  }
  if (named === null) return { thread: null, newThread: null };
  const key = run.routingKey;
  if (key === null) return { thread: null, newThread: { reason: 'no_routing_key', requested: named.requested } };
  if (!named.thread.participants.has(key)) return { thread: null, newThread: { reason: 'not_a_participant', requested: named.requested } };
  return { thread: named.thread, newThread: null };
}

/**
 * The reply's Message-ID and addressees: to the message's Reply-To or From; copied to the agent's
 * escalation address when the run passed something on (a refused call, a call awaiting approval, or
 * a model that says so), and to the requesters of the requests it decided. Everyone it goes to
 * becomes a participant of the thread.
 */
function addressed(
  deps: MessageHandlingDeps<RunRecords>,
  run: ToolRun,
  message: InboundMessage,
  end: RunEnd,
): ReplyView & { participants: string[] } {
  const to = [message.reply_to ?? message.from];
  const seen = new Set(routingKeysOf(to));
  const cc: string[] = [];
  const copy = (address: string | null) => {
    const key = address === null ? undefined : routingKeysOf(address)[0];
    if (address === null || key === undefined || seen.has(key)) return;
    seen.add(key);
    cc.push(address);
  };
  const passedOn = end.escalate || end.steps.some((s) => s.status === 'denied' || s.status === 'pending_approval');
  if (passedOn) copy(run.agent.escalation_address);
  for (const decided of end.decisions.decided) copy(decided.requested_by);
  const notice = approvalNotice(end.requested, end.decisions);
  const text = [end.reply ?? '', notice].filter((part) => part !== null && part !== '').join('\n\n');
  return { text, message_id: newMessageId(deps.messageIdDomain), to, cc, participants: [...seen] };
}

function resultOf(run: ToolRun, end: RunEnd, reply: ReplyView | null): Omit<RunResult, 'run_id' | 'thread_id' | 'new_thread'> {
  const automatic = end.stopped === 'auto_reply';
  return {
    run: run.kind,
    routing_key: run.routingKey,
    tools_offered: automatic ? [] : [...run.tools],
    needs_approval: automatic ? [] : [...run.toolsNeedingApproval],
    steps: [...end.steps],
    ...(end.decisions.decided.length > 0 ? { decided: [...end.decisions.decided] } : {}),
    ...(end.decisions.undecided.length > 0 ? { undecided: [...end.decisions.undecided] } : {}),
    reply: reply
      ? { text: reply.text, message_id: reply.message_id, to: reply.to, cc: reply.cc }
      : { text: end.reply ?? '', message_id: null, to: [], cc: [] },
    stopped: end.stopped,
    ...(end.error ? { error: end.error } : {}),
  };
}
