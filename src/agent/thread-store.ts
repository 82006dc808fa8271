// Threads in PostgreSQL (SEMANTICS §11): a thread is bound to its participants, the routing keys of
// the addresses its messages and the agent's replies hold. It is named by an opaque reference (never
// its row id), or found as mail finds it, by a Message-ID it holds; an operator lists them by
// activity. Its runs are RunStore's, which writes each in the same transaction as its thread's.
import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { decodeCursor, encodeCursor, type CursorKey } from '../core/page-cursor';
import { NotFoundError, ValidationError } from '../errors';

export const threadViewSchema = z.object({
  id: z.string().describe("the thread's reference"),
  agent_id: z.number().int(),
  subject: z.string().nullable(),
  message_count: z.number().int(),
  participants: z.array(z.string()).describe('the routing keys that may write into the thread'),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ThreadView = z.output<typeof threadViewSchema>;

/** A thread as a run finds it: its row id (never shown), its reference and its participants. */
export interface ThreadRef {
  id: number;
  reference: string;
  participants: ReadonlySet<string>;
}

export class ThreadStore {
  constructor(private readonly sequelize: Sequelize) {}

  /** The agent's thread named by this reference, or null (another agent's thread is none of its). */
  async byReference(agentId: number, reference: string): Promise<ThreadRef | null> {
    const [row] = await this.sequelize.query<{ id: number; reference: string; participants: string[] }>(
      `SELECT t.id, t.reference, ${PARTICIPANTS} AS participants FROM threads t WHERE t.agent_id = :agentId AND t.reference = :reference`,
      { replacements: { agentId, reference }, type: QueryTypes.SELECT },
    );
    return row ? { id: row.id, reference: row.reference, participants: new Set(row.participants) } : null;
  }

  /**
   * The agent's thread holding one of these Message-IDs (an inbound message's or a reply's), and the
   * id that found it: the first in the order given that the agent knows.
   */
  async byMessageIds(agentId: number, ids: readonly string[]): Promise<{ thread: ThreadRef; message_id: string } | null> {
    if (ids.length === 0) return null;
    const [row] = await this.sequelize.query<{ id: number; reference: string; participants: string[]; message_id: string }>(
      `SELECT t.id, t.reference, ${PARTICIPANTS} AS participants, m.message_id
         FROM unnest(ARRAY[:ids]::varchar[]) WITH ORDINALITY AS wanted(message_id, n)
         JOIN agent_message_ids m ON m.agent_id = :agentId AND m.message_id = wanted.message_id
         JOIN threads t ON t.id = m.thread_id
        ORDER BY wanted.n LIMIT 1`,
      { replacements: { agentId, ids: [...ids] }, type: QueryTypes.SELECT },
    );
    return row
      ? { thread: { id: row.id, reference: row.reference, participants: new Set(row.participants) }, message_id: row.message_id }
      : null;
  }

  /** The agent's thread for an operator; 404 when it names none of this agent's. */
  async thread(agentId: number, reference: string): Promise<ThreadView & { row_id: number }> {
    const [row] = await this.sequelize.query<ThreadRow & { row_id: number }>(
      `${THREAD_SELECT} WHERE t.agent_id = :agentId AND t.reference = :reference`,
      {
        replacements: { agentId, reference },
        type: QueryTypes.SELECT,
      },
    );
    if (!row) throw new NotFoundError(`Thread ${reference} of agent ${agentId}`);
    return { ...threadView(row), row_id: row.row_id };
  }

  /**
   * A page of the agent's threads, newest activity first (then the newest thread), starting just
   * after the cursor's thread; reads the page's rows of threads_agent_activity_idx (migration
   * 20261207000003). A thread's activity only moves it up, past where a walk of the pages has
   * already been, so a walk shows each thread at most once, and exactly once each thread that had
   * no new run while it went on (one that had is at the top of a first page again).
   */
  async list(agentId: number, query: { limit: number; after?: string }): Promise<{ threads: ThreadView[]; next: string | null }> {
    let after: CursorKey | null = null;
    if (query.after !== undefined) {
      after = decodeCursor(query.after, ['id', 'id']);
      if (after === null) throw badThreadCursor();
    }
    // The time as microseconds since the epoch, a whole number: a JavaScript Date would cut it to
    // milliseconds, and two threads a microsecond apart would share a key.
    const rows = await this.sequelize.query<ThreadRow & { row_id: number; activity_us: string }>(
      `${THREAD_SELECT}
        WHERE t.agent_id = :agentId
          AND (:afterUs::bigint IS NULL OR (t.updated_at, t.id) < (timestamptz 'epoch' + :afterUs::bigint * interval '1 microsecond', :afterId::integer))
        ORDER BY t.updated_at DESC, t.id DESC LIMIT :limit`,
      {
        replacements: { agentId, afterUs: after?.[0] ?? null, afterId: after?.[1] ?? null, limit: query.limit + 1 },
        type: QueryTypes.SELECT,
      },
    );
    const shown = rows.slice(0, query.limit);
    const last = shown[shown.length - 1];
    const next = rows.length > query.limit && last ? encodeCursor([Number(last.activity_us), last.row_id]) : null;
    return { threads: shown.map(threadView), next };
  }

  /** A new thread of the agent's, under a new reference, within the transaction that writes its first run. */
  async open(agentId: number, subject: string | null, transaction: Transaction): Promise<ThreadRef> {
    const reference = newThreadReference();
    const [created] = await this.sequelize.query<{ id: number }>(
      'INSERT INTO threads (agent_id, subject, reference) VALUES (:agentId, :subject, :reference) RETURNING id',
      { replacements: { agentId, subject, reference }, type: QueryTypes.SELECT, transaction },
    );
    return { id: created!.id, reference, participants: new Set() };
  }

  /** A run in the thread is its latest activity. */
  async touch(threadId: number, transaction: Transaction): Promise<void> {
    await this.sequelize.query('UPDATE threads SET updated_at = now() WHERE id = :id', { replacements: { id: threadId }, transaction });
  }

  /** The routing keys join the thread's participants, within the transaction that writes their run. */
  async join(threadId: number, keys: readonly string[], transaction: Transaction): Promise<void> {
    if (keys.length === 0) return;
    await this.sequelize.query(
      `INSERT INTO thread_participants (thread_id, routing_key) SELECT :threadId, k FROM unnest(ARRAY[:keys]::varchar[]) AS k ON CONFLICT DO NOTHING`,
      { replacements: { threadId, keys: [...keys] }, transaction },
    );
  }
}

/** A thread's reference: 128 random bits, so knowing one thread's tells nothing of another's. */
export function newThreadReference(): string {
  return `thr_${randomBytes(16).toString('hex')}`;
}

const PARTICIPANTS = `coalesce((SELECT array_agg(p.routing_key ORDER BY p.routing_key) FROM thread_participants p WHERE p.thread_id = t.id), '{}')`;

interface ThreadRow {
  reference: string;
  agent_id: number;
  subject: string | null;
  message_count: string | number;
  participants: string[];
  created_at: Date;
  updated_at: Date;
}

const THREAD_SELECT = `SELECT t.id AS row_id, (extract(epoch FROM t.updated_at) * 1000000)::bigint AS activity_us, t.reference, t.agent_id, t.subject, t.created_at, t.updated_at, ${PARTICIPANTS} AS participants,
  (SELECT count(*) FROM agent_runs r WHERE r.thread_id = t.id) AS message_count FROM threads t`;

function threadView(row: ThreadRow): ThreadView {
  return {
    id: row.reference,
    agent_id: row.agent_id,
    subject: row.subject,
    message_count: Number(row.message_count),
    participants: row.participants,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function badThreadCursor(): ValidationError {
  return new ValidationError([
    {
      loc: ['query', 'after'],
      msg: 'not a cursor of this list: pass the `after` a page of it gave as its next (Toolgate-Next-Cursor), or none for the first page',
      type: 'invalid_cursor',
    },
  ]);
}
