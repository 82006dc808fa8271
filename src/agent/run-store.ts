// Threads and agent runs in PostgreSQL: a run is written when it starts (with what it was offered)
// and completed when it ends (its steps, its reply, why it stopped), so an operator can read what
// happened and the next message of a thread is answered with the thread's history.
import { QueryTypes, type Sequelize } from 'sequelize';
import { NotFoundError } from '../errors';
import type { InboundMessage } from '../llm/agent-step';

/** One tool call of a run, in order: what the model asked for and what came of it. */
export interface StepView {
  tool: string;
  input: unknown;
  status: 'success' | 'failure' | 'denied';
  output?: unknown;
  error?: string;
}

export type Stopped = 'reply' | 'max_steps' | 'model_error';

export type RunMessage = InboundMessage | { instruction: string };

export interface AgentRunView {
  id: number;
  thread_id: number | null;
  run: 'sender' | 'scheduled';
  message: RunMessage;
  routing_key: string | null;
  tools_offered: string[];
  steps: StepView[];
  reply: { text: string } | null;
  /** Null while the run is still going (or died before it could say). */
  stopped: Stopped | null;
  error: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface ThreadView {
  id: number;
  agent_id: number;
  subject: string | null;
  message_count: number;
  created_at: string;
  updated_at: string;
}

export interface RunEnd {
  steps: readonly StepView[];
  reply: string | null;
  stopped: Stopped;
  error: string | null;
}

/** A step's input or output is kept for operators, bounded so a runaway tool cannot bloat a row. */
const MAX_STORED_JSON = 16_384;

/** A row as read: the view's fields, with the reply as text and the times as dates. */
type RunRow = Omit<AgentRunView, 'reply' | 'created_at' | 'completed_at'> & { reply: string | null; created_at: Date; completed_at: Date | null };

const RUN_COLUMNS = 'id, thread_id, run, message, routing_key, tools_offered, steps, reply, stopped, error, created_at, completed_at';

export class RunStore {
  constructor(private readonly sequelize: Sequelize) {}

  /** The agent's thread; another agent's thread is a 404, as if it did not exist. */
  async thread(agentId: number, threadId: number): Promise<ThreadView> {
    const [row] = await this.sequelize.query<ThreadRow>(
      `${THREAD_SELECT} WHERE t.agent_id = :agentId AND t.id = :threadId`,
      { replacements: { agentId, threadId }, type: QueryTypes.SELECT },
    );
    if (!row) throw new NotFoundError(`Thread ${threadId} of agent ${agentId}`);
    return threadView(row);
  }

  /** Newest activity first. */
  async threads(agentId: number, limit: number): Promise<ThreadView[]> {
    const rows = await this.sequelize.query<ThreadRow>(`${THREAD_SELECT} WHERE t.agent_id = :agentId ORDER BY t.updated_at DESC, t.id DESC LIMIT :limit`, {
      replacements: { agentId, limit },
      type: QueryTypes.SELECT,
    });
    return rows.map(threadView);
  }

  /** A thread's runs, oldest first: its messages, each with its run; with `last`, only the newest that many. */
  async threadRuns(threadId: number, last?: number): Promise<AgentRunView[]> {
    const rows = await this.sequelize.query<RunRow>(
      `SELECT * FROM (SELECT ${RUN_COLUMNS} FROM agent_runs WHERE thread_id = :threadId ORDER BY id DESC LIMIT :last) r ORDER BY id`,
      { replacements: { threadId, last: last ?? null }, type: QueryTypes.SELECT },
    );
    return rows.map(runView);
  }

  /** The agent's runs, newest first, scheduled ones included. */
  async runs(agentId: number, limit: number): Promise<AgentRunView[]> {
    const rows = await this.sequelize.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM agent_runs WHERE agent_id = :agentId ORDER BY id DESC LIMIT :limit`, {
      replacements: { agentId, limit },
      type: QueryTypes.SELECT,
    });
    return rows.map(runView);
  }

  /**
   * Writes a run as it starts and returns its id and thread: in the thread given, whose activity it
   * is, or in a new thread (`thread: { subject }`), made in the same transaction so that a run that
   * cannot be written leaves no empty thread; a scheduled run has none (`thread: null`).
   */
  async start(run: {
    agent_id: number;
    thread: number | { subject: string | null } | null;
    run: 'sender' | 'scheduled';
    message: RunMessage;
    routing_key: string | null;
    tools_offered: readonly string[];
  }): Promise<{ id: number; thread_id: number | null }> {
    return this.sequelize.transaction(async (transaction) => {
      let threadId: number | null = null;
      if (typeof run.thread === 'number') {
        threadId = run.thread;
        await this.sequelize.query('UPDATE threads SET updated_at = now() WHERE id = :id', { replacements: { id: threadId }, transaction });
      } else if (run.thread !== null) {
        const [created] = await this.sequelize.query<{ id: number }>('INSERT INTO threads (agent_id, subject) VALUES (:agentId, :subject) RETURNING id', {
          replacements: { agentId: run.agent_id, subject: run.thread.subject },
          type: QueryTypes.SELECT,
          transaction,
        });
        threadId = created!.id;
      }
      const [row] = await this.sequelize.query<{ id: number }>(
        `INSERT INTO agent_runs (agent_id, thread_id, run, message, routing_key, tools_offered)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6::varchar(64)[]) RETURNING id`,
        { bind: [run.agent_id, threadId, run.run, JSON.stringify(run.message), run.routing_key, [...run.tools_offered]], type: QueryTypes.SELECT, transaction },
      );
      return { id: row!.id, thread_id: threadId };
    });
  }

  async complete(id: number, end: RunEnd): Promise<void> {
    await this.sequelize.query(
      `UPDATE agent_runs SET steps = :steps::jsonb, reply = :reply, stopped = :stopped, error = :error, completed_at = now() WHERE id = :id`,
      { replacements: { id, steps: JSON.stringify(end.steps.map(bounded)), reply: end.reply, stopped: end.stopped, error: end.error } },
    );
  }
}

interface ThreadRow {
  id: number;
  agent_id: number;
  subject: string | null;
  message_count: string | number;
  created_at: Date;
  updated_at: Date;
}

const THREAD_SELECT = `SELECT t.id, t.agent_id, t.subject, t.created_at, t.updated_at,
  (SELECT count(*) FROM agent_runs r WHERE r.thread_id = t.id) AS message_count FROM threads t`;

function threadView(row: ThreadRow): ThreadView {
  return { ...row, message_count: Number(row.message_count), created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

function runView(row: RunRow): AgentRunView {
  return {
    ...row,
    reply: row.reply === null ? null : { text: row.reply },
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

function bounded(step: StepView): StepView {
  return { ...step, input: boundedJson(step.input), ...(step.output !== undefined ? { output: boundedJson(step.output) } : {}) };
}

function boundedJson(value: unknown): unknown {
  const text = JSON.stringify(value ?? null);
  return text.length <= MAX_STORED_JSON ? value : { truncated: true, preview: text.slice(0, MAX_STORED_JSON) };
}
