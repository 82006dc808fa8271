// Agent runs in PostgreSQL: a run is written when it starts (with what it was offered, in its
// thread's transaction: thread-store.ts) and completed when it ends (its steps, its reply, why it
// stopped), so an operator can read what happened and the next message of a thread is answered with
// the thread's history. The Message-IDs an agent knows are its runs' too: an inbound message's id is
// claimed with its run, so a redelivery finds the run and its answer; a reply's with the run's end.
// What the model reads of a thread is bounded by count and size, and an operator reads it in pages.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { runShadowSchema, type RunShadow } from '../core/shadow';
import { storableJson, storableText } from '../core/storable-text';
import { aliveSql, type Instances } from '../db/instances';
import { inboundMessageSchema, stepStatusSchema } from '../llm/agent-step';
import { dispatchKindSchema, type DispatchKind } from '../core/types';
import { runDecisionsSchema, type RunDecisions } from '../core/run-decisions';
import type { ApprovalRequestView } from '../core/approval-request';
import { threadViewSchema, type ThreadRef, type ThreadStore } from './thread-store';

/** One tool call of a run, in order: what the model asked for and what came of it. */
export const stepViewSchema = z.object({
  tool: z.string(),
  input: z.unknown().describe('the arguments as the model gave them: parsed JSON, or the text when it was not JSON'),
  status: stepStatusSchema,
  output: z.unknown().optional(),
  error: z.string().optional(),
  approval_request_id: z
    .number()
    .int()
    .optional()
    .describe('the approval request a pending_approval step was filed as (or found pending), or the approved one whose call it repeats'),
});
export type StepView = z.output<typeof stepViewSchema>;

/**
 * Why a run stopped: it replied; a bound stopped it; the model failed; toolgate's own work failed
 * after a tool had run (`error`: the answer still says what ran, never a 5xx); its instance died
 * and the sweeper closed it (`interrupted`); or its message was an automatic reply, which runs
 * nothing and is not answered (`auto_reply`).
 */
export const stoppedSchema = z.enum(['reply', 'max_steps', 'model_error', 'error', 'interrupted', 'auto_reply']);
export type Stopped = z.infer<typeof stoppedSchema>;

const runMessageSchema = z.union([
  inboundMessageSchema,
  z.object({ instruction: z.string(), original_length: z.number().int().optional() }),
]);
export type RunMessage = z.output<typeof runMessageSchema>;

/** Why a message that named a thread was handled in a new one instead. */
export const newThreadSchema = z.object({
  reason: z.enum(['not_a_participant', 'no_routing_key']),
  requested: z.string().describe('what the message named: the thread reference it gave, or the Message-ID that found the thread'),
});
export type NewThread = z.output<typeof newThreadSchema>;

/** The reply as it goes out: its own Message-ID, and the addresses it is sent and copied to. */
const replyViewSchema = z.object({ text: z.string(), message_id: z.string(), to: z.array(z.string()), cc: z.array(z.string()) });
export type ReplyView = z.output<typeof replyViewSchema>;

/** A run as stored, with its message and what came of it. */
export const agentRunViewSchema = z.object({
  id: z.number().int(),
  /** The thread's reference; null for a scheduled run. */
  thread_id: z.string().nullable(),
  run: dispatchKindSchema,
  message: runMessageSchema,
  routing_key: z.string().nullable(),
  tools_offered: z.array(z.string()),
  steps: z.array(stepViewSchema),
  decisions: runDecisionsSchema.nullable().describe('what toolgate read in the message for approval decisions; null when nothing'),
  reply: replyViewSchema.nullable(),
  stopped: stoppedSchema.nullable().describe('null while the run is going; interrupted: its instance died and the sweeper closed it'),
  error: z.string().nullable(),
  new_thread: newThreadSchema.nullable(),
  shadow: runShadowSchema.optional(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});
export type AgentRunView = z.output<typeof agentRunViewSchema>;

/**
 * How a run ended: its steps, its reply, why it stopped; whether it asked to copy the escalation
 * address; the decisions read before it ran, and the requests its calls filed or found pending.
 */
export interface RunEnd {
  steps: readonly StepView[];
  reply: string | null;
  stopped: Stopped;
  error: string | null;
  escalate: boolean;
  decisions: RunDecisions;
  requested: readonly ApprovalRequestView[];
}

/** What the model reads of a thread: the latest `messages` runs, each message cut at `messageChars`. */
export interface HistoryBounds {
  messages: number;
  messageChars: number;
}

/** One page of a thread for an operator, oldest first, and where the next page starts. */
/** A page of a thread's messages, each with its run, and where the next page starts. */
const threadPageSchema = z.object({
  messages: z.array(agentRunViewSchema),
  next_after: z.number().int().nullable().describe('pass as `after` for the next page; null on the last'),
});
export type ThreadPage = z.output<typeof threadPageSchema>;

/** A thread with a page of its messages, as its route answers. */
export const threadWithMessagesSchema = threadViewSchema.extend(threadPageSchema.shape);

/** A step's input or output is kept for operators, bounded so a runaway tool cannot bloat a row. */
export const MAX_STORED_JSON = 16_384;

/** A page of runs stops growing once it holds this many characters of messages and replies. */
const PAGE_CHARS = 1_000_000;

interface RunRow {
  id: number;
  thread_reference: string | null;
  run: DispatchKind;
  message: RunMessage;
  routing_key: string | null;
  tools_offered: string[];
  steps: StepView[];
  decisions: RunDecisions | null;
  reply: string | null;
  reply_message_id: string | null;
  reply_to: string[] | null;
  reply_cc: string[] | null;
  stopped: Stopped | null;
  error: string | null;
  new_thread: NewThread | null;
  shadow?: RunShadow | null;
  created_at: Date;
  completed_at: Date | null;
  size?: string | number;
}

const RUN_COLUMNS = `r.id, t.reference AS thread_reference, r.run, r.message, r.routing_key, r.tools_offered, r.steps, r.decisions, r.reply,
  r.reply_message_id, r.reply_to, r.reply_cc, r.stopped, r.error, r.new_thread, r.shadow, r.created_at, r.completed_at`;
const RUN_FROM = 'FROM agent_runs r LEFT JOIN threads t ON t.id = r.thread_id';

/** A message id this agent already knows: a message it handled (or is handling), or one of its replies. */
export interface HandledMessage {
  origin: 'inbound' | 'reply';
  routing_key: string | null;
  content_digest: string | null;
  run: AgentRunView;
  /** What its run answered, when it completed and the answer was kept. */
  answer: unknown;
  /** Whether the instance that ran it still beats (a run still open on a live instance is in flight). */
  holder_alive: boolean;
}

/** A message id another request claimed first (a redelivery racing its first delivery). */
export class MessageIdTaken extends Error {
  constructor(readonly messageId: string) {
    super(`the Message-ID ${messageId} was claimed by another request`);
    this.name = 'MessageIdTaken';
  }
}

export class RunStore {
  /** The runs this instance has started and not yet ended: the sweeper leaves them be. */
  readonly open = new Set<number>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly instances: Instances,
    /** The threads its runs are in: a run is written in the same transaction as its thread's activity and participants. */
    readonly threads: ThreadStore,
  ) {}

  /**
   * What the agent knows of a Message-ID, with its run, in one indexed read: the redelivery of a
   * handled message is answered from here, and runs nothing.
   */
  async handled(agentId: number, messageId: string): Promise<HandledMessage | null> {
    const [row] = await this.sequelize.query<
      RunRow & { origin: 'inbound' | 'reply'; content_digest: string | null; answer: unknown; holder_alive: boolean }
    >(
      `SELECT ${RUN_COLUMNS}, m.origin, m.content_digest, r.answer, ${aliveSql('r.instance_id')} AS holder_alive
         FROM agent_message_ids m JOIN agent_runs r ON r.id = m.run_id LEFT JOIN threads t ON t.id = r.thread_id
        WHERE m.agent_id = :agentId AND m.message_id = :messageId`,
      { replacements: { agentId, messageId, stale: this.instances.timings.staleAfterMs }, type: QueryTypes.SELECT },
    );
    if (!row) return null;
    return {
      origin: row.origin,
      routing_key: row.routing_key,
      content_digest: row.content_digest,
      run: runView(row),
      answer: row.answer,
      holder_alive: row.holder_alive,
    };
  }

  /**
   * Lets a message's Message-ID go, so the message that truly bears it can be handled (SEMANTICS
   * §13): the claim of an inbound message's run, never a reply's. With `unauthenticated`, only a
   * claim whose run had no routing key. The run and its thread stay as they were; the id of the run
   * that held the claim, or null when there was none to release.
   */
  async releaseMessageId(agentId: number, messageId: string, options: { unauthenticated?: boolean } = {}): Promise<number | null> {
    const [row] = await this.sequelize.query<{ run_id: number }>(
      `DELETE FROM agent_message_ids m USING agent_runs r
        WHERE m.agent_id = :agentId AND m.message_id = :messageId AND m.origin = 'inbound' AND r.id = m.run_id
          AND (:any OR r.routing_key IS NULL) RETURNING m.run_id`,
      { replacements: { agentId, messageId, any: options.unauthenticated !== true }, type: QueryTypes.SELECT },
    );
    return row ? Number(row.run_id) : null;
  }

  /**
   * The thread's latest runs as the model reads them, oldest first: only those of its participants
   * (a thread kept from before participants were recorded may hold a stranger's message), each
   * message and reply cut in the database at `messageChars`, so a thread of huge messages is never
   * read whole.
   */
  async history(thread: ThreadRef, bounds: HistoryBounds): Promise<AgentRunView[]> {
    const rows = await this.sequelize.query<RunRow>(
      `SELECT * FROM (
         SELECT r.id, :reference AS thread_reference, r.run, ${cutMessage('r.message')} AS message, r.routing_key, r.tools_offered, r.steps, r.decisions,
                left(r.reply, :cut) AS reply, r.reply_message_id, r.reply_to, r.reply_cc, r.stopped, r.error, r.new_thread, r.created_at, r.completed_at
           FROM agent_runs r
          WHERE r.thread_id = :threadId AND r.routing_key = ANY (ARRAY[:keys]::varchar[])
          ORDER BY r.id DESC LIMIT :last) h
       ORDER BY id`,
      {
        replacements: {
          threadId: thread.id,
          reference: thread.reference,
          keys: [...thread.participants, ''],
          last: bounds.messages,
          cut: bounds.messageChars,
        },
        type: QueryTypes.SELECT,
      },
    );
    return rows.map(runView);
  }

  /**
   * A page of a thread's runs, oldest first, after the run `after`: at most `limit`, and fewer when
   * their messages and replies pass a million characters (always at least one).
   */
  async threadPage(threadRowId: number, options: { after: number; limit: number }): Promise<ThreadPage> {
    const rows = await this.sequelize.query<RunRow>(
      `SELECT ${RUN_COLUMNS}, octet_length(r.message::text) + coalesce(octet_length(r.reply), 0) + octet_length(r.steps::text) AS size
         ${RUN_FROM} WHERE r.thread_id = :threadId AND r.id > :after ORDER BY r.id LIMIT :limit`,
      { replacements: { threadId: threadRowId, after: options.after, limit: options.limit + 1 }, type: QueryTypes.SELECT },
    );
    return paged(rows, options.limit);
  }

  /** The agent's runs, newest first (scheduled ones included), in pages as a thread's are. */
  async runs(
    agentId: number,
    options: { before: number | null; limit: number },
  ): Promise<{ runs: AgentRunView[]; next_before: number | null }> {
    const rows = await this.sequelize.query<RunRow>(
      `SELECT ${RUN_COLUMNS}, octet_length(r.message::text) + coalesce(octet_length(r.reply), 0) + octet_length(r.steps::text) AS size
         ${RUN_FROM} WHERE r.agent_id = :agentId AND (:before::integer IS NULL OR r.id < :before) ORDER BY r.id DESC LIMIT :limit`,
      { replacements: { agentId, before: options.before, limit: options.limit + 1 }, type: QueryTypes.SELECT },
    );
    const page = paged(rows, options.limit);
    return { runs: page.messages, next_before: page.next_after };
  }

  /**
   * Writes a run as it starts and returns its id and thread: in the thread given, whose activity it
   * is, or in a new thread (`thread: { subject }`) under a new reference, made in the same
   * transaction so that a run that cannot be written leaves no empty thread; a scheduled run has
   * none (`thread: null`). The message's addresses join the thread's participants and its
   * Message-ID the agent's known ids. `row` is the new agent_runs row's values (its `run` column is
   * the run's kind).
   */
  async start(row: {
    agent_id: number;
    thread: ThreadRef | { subject: string | null } | null;
    run: DispatchKind;
    message: RunMessage;
    routing_key: string | null;
    tools_offered: readonly string[];
    /** The run's key, which its tool-call records keep too (SEMANTICS §15). */
    run_key?: string | null;
    participants: readonly string[];
    message_id: string | null;
    /** The digest of the message's sender and content: a redelivery is the same message_id with the same digest. */
    content_digest?: string | null;
    new_thread: NewThread | null;
    /** What the attachments' candidate terms would change of the offer (SEMANTICS §15); null when nothing. */
    shadow?: RunShadow | null;
  }): Promise<{ id: number; thread: ThreadRef | null }> {
    await this.instances.register();
    const started = await this.sequelize.transaction(async (transaction) => {
      let thread: ThreadRef | null = null;
      if (row.thread !== null && 'id' in row.thread) {
        thread = row.thread;
        await this.threads.touch(thread.id, transaction);
      } else if (row.thread !== null) {
        thread = await this.threads.open(row.agent_id, row.thread.subject, transaction);
      }
      const [inserted] = await this.sequelize.query<{ id: number }>(
        `INSERT INTO agent_runs (agent_id, thread_id, run, message, routing_key, tools_offered, new_thread, instance_id, shadow, run_key)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6::varchar(64)[], $7::jsonb, $8, $9::jsonb, $10::uuid) RETURNING id`,
        {
          bind: [
            row.agent_id,
            thread?.id ?? null,
            row.run,
            JSON.stringify(storableJson(row.message)),
            row.routing_key,
            [...row.tools_offered],
            row.new_thread ? JSON.stringify(row.new_thread) : null,
            this.instances.id,
            row.shadow ? JSON.stringify(row.shadow) : null,
            row.run_key ?? null,
          ],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      const id = inserted!.id;
      if (thread !== null) {
        // The message's id is claimed with its run: of two deliveries at once, one runs, and the other
        // finds the claim (this transaction, and its run, are undone for it).
        if (
          row.message_id !== null &&
          !(await this.knowMessageId(row.agent_id, row.message_id, thread.id, id, 'inbound', transaction, row.content_digest ?? null))
        ) {
          throw new MessageIdTaken(row.message_id);
        }
        await this.threads.join(thread.id, row.participants, transaction);
        thread = { ...thread, participants: new Set([...thread.participants, ...row.participants]) };
      }
      return { id, thread };
    });
    this.open.add(started.id);
    return started;
  }

  /**
   * Undoes a run that failed before any tool ran (SEMANTICS §13): its row and its Message-ID's claim
   * go, and so does a thread that held only it, so the caller's retry handles the message anew, as
   * a 5xx promises. When even that cannot be written, the run stays open, and the sweeper closes it.
   */
  async abandon(id: number): Promise<void> {
    this.open.delete(id);
    await this.sequelize.query(
      `WITH gone AS (DELETE FROM agent_runs WHERE id = :id AND completed_at IS NULL RETURNING thread_id)
       DELETE FROM threads t USING gone WHERE t.id = gone.thread_id AND NOT EXISTS (SELECT 1 FROM agent_runs r WHERE r.thread_id = t.id AND r.id <> :id)`,
      { replacements: { id } },
    );
  }

  /**
   * Completes a run: its steps, its reply (whose addressees join the thread), why it stopped, and
   * the answer a redelivery of its message gets.
   */
  async complete(
    run: { id: number; agent_id: number; thread_id: number | null },
    end: RunEnd,
    reply: (ReplyView & { participants: readonly string[] }) | null,
    answer: unknown = null,
  ): Promise<void> {
    try {
      await this.#complete(run, end, reply, answer);
    } finally {
      this.open.delete(run.id);
    }
  }

  async #complete(
    run: { id: number; agent_id: number; thread_id: number | null },
    end: RunEnd,
    reply: (ReplyView & { participants: readonly string[] }) | null,
    answer: unknown,
  ): Promise<void> {
    await this.sequelize.transaction(async (transaction) => {
      await this.sequelize.query(
        `UPDATE agent_runs SET steps = $1::jsonb, reply = $2, stopped = $3, error = $4, reply_message_id = $5, reply_to = $6::jsonb, reply_cc = $7::jsonb,
                answer = $9::json, decisions = $10::jsonb, completed_at = now() WHERE id = $8`,
        {
          // What a model and its tools wrote is made storable first (SEMANTICS §13).
          bind: [
            JSON.stringify(storableJson(end.steps.map(bounded))),
            // The reply as it goes out (with toolgate's own lines), which the thread then holds.
            reply !== null ? storableText(reply.text) : end.reply === null ? null : storableText(end.reply),
            end.stopped,
            end.error === null ? null : storableText(end.error),
            reply?.message_id ?? null,
            reply ? JSON.stringify(storableJson(reply.to)) : null,
            reply ? JSON.stringify(storableJson(reply.cc)) : null,
            run.id,
            answer === null ? null : JSON.stringify(storableJson(answer)),
            end.decisions.decided.length + end.decisions.undecided.length === 0 ? null : JSON.stringify(storableJson(end.decisions)),
          ],
          transaction,
        },
      );
      if (reply === null || run.thread_id === null) return;
      await this.threads.join(run.thread_id, reply.participants, transaction);
      await this.knowMessageId(run.agent_id, reply.message_id, run.thread_id, run.id, 'reply', transaction);
    });
  }

  /** Keeps a Message-ID for the agent; false when another message or reply has it already (the first keeps it). */
  private async knowMessageId(
    agentId: number,
    messageId: string,
    threadId: number,
    runId: number,
    origin: 'inbound' | 'reply',
    transaction: Transaction,
    contentDigest: string | null = null,
  ): Promise<boolean> {
    const kept = await this.sequelize.query(
      `INSERT INTO agent_message_ids (agent_id, message_id, thread_id, run_id, origin, content_digest) VALUES (:agentId, :messageId, :threadId, :runId, :origin, :contentDigest)
       ON CONFLICT DO NOTHING RETURNING message_id`,
      { replacements: { agentId, messageId, threadId, runId, origin, contentDigest }, type: QueryTypes.SELECT, transaction },
    );
    return kept.length > 0;
  }
}

/** A message as the model reads it: its text fields cut at `:cut` characters, so long ones are never read whole. */
// The addressees are left out: the model reads who wrote, and what.
function cutMessage(column: string): string {
  return `((${column} - 'to' - 'cc' - 'reply_to' - 'references') || jsonb_strip_nulls(jsonb_build_object(
    'body', left(${column}->>'body', :cut), 'subject', left(${column}->>'subject', :cut), 'instruction', left(${column}->>'instruction', :cut),
    'original_length', CASE WHEN length(${column}->>'body') > :cut OR length(${column}->>'instruction') > :cut
      THEN greatest(length(${column}->>'body'), length(${column}->>'instruction')) END)))`;
}

/** At most `limit` rows, fewer once they hold PAGE_CHARS (never none), and the cursor past the last. */
function paged(rows: RunRow[], limit: number): ThreadPage {
  const messages: AgentRunView[] = [];
  let size = 0;
  for (const row of rows.slice(0, limit)) {
    size += Number(row.size ?? 0);
    if (messages.length > 0 && size > PAGE_CHARS) break;
    messages.push(runView(row));
  }
  const more = messages.length < rows.length;
  return { messages, next_after: more ? (messages[messages.length - 1]?.id ?? null) : null };
}

function runView(row: RunRow): AgentRunView {
  return {
    id: row.id,
    thread_id: row.thread_reference,
    run: row.run,
    message: row.message,
    routing_key: row.routing_key,
    tools_offered: row.tools_offered,
    steps: row.steps,
    decisions: row.decisions,
    reply:
      row.reply === null
        ? null
        : { text: row.reply, message_id: row.reply_message_id ?? '', to: row.reply_to ?? [], cc: row.reply_cc ?? [] },
    stopped: row.stopped,
    error: row.error,
    new_thread: row.new_thread,
    ...(row.shadow ? { shadow: row.shadow } : {}),
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

function bounded(step: StepView): StepView {
  return { ...step, input: boundedJson(step.input), ...(step.output !== undefined ? { output: boundedJson(step.output) } : {}) };
}

export function boundedJson(value: unknown, max = MAX_STORED_JSON): unknown {
  const text = JSON.stringify(value ?? null);
  return text.length <= max ? value : { truncated: true, preview: text.slice(0, max) };
}
