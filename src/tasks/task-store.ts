// Tasks that task_creator files from a message's action items, and the agent's task list. Filing is
// idempotent per (agent, source message, title): a retried workflow, even one racing the first run
// on another connection, gets back the same rows and never a duplicate.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { storableText } from '../core/storable-text';
import { storedAtSchema } from '../core/types';
import { NotFoundError } from '../errors';
import type { TaskItem, TaskSource } from './task-source';
import { messageIdOf, taskSourceKey } from './source-key';

/** HTTP.md's task: `{id, agent_id, title, status, due, source_message_id, created_at}`. */
export const taskViewSchema = z.object({
  id: z.number().int(),
  agent_id: z.number().int(),
  title: z.string(),
  status: z.string(),
  due: z.string().nullable(),
  source_message_id: z.string().nullable(),
  created_at: storedAtSchema,
});
export type TaskView = z.output<typeof taskViewSchema>;

/** Where a new task starts (the legacy app's word for it). */
export const INITIAL_STATUS = 'pending';

// Model-written action items can run long; a task title is a line, not a paragraph.
const MAX_TITLE_CHARS = 200;
const MAX_DUE_CHARS = 200;

interface TaskRow {
  id: number | string;
  agent_id: number | string;
  title: string | null;
  status: string | null;
  due: string | null;
  source_message_id: string | null;
  created_at: Date | null;
}

const COLUMNS = 'id, agent_id, title, status, due, source_message_id, created_at';

export class TaskStore {
  constructor(private readonly sequelize: Sequelize) {}

  /**
   * One task per distinct action item title, returned in the items' order (a repeated title
   * returns its task once). A title is trimmed, its inner whitespace collapsed and cut to 200
   * characters; an item left with no title files nothing. A task already filed for this
   * (agent, message, title) is returned as it is: a retry changes nothing, not even `due`.
   */
  async createTasksFromActionItems(
    agentId: number,
    items: readonly TaskItem[],
    source: TaskSource,
    transaction?: Transaction,
  ): Promise<TaskView[]> {
    const wanted = new Map<string, string | null>();
    for (const item of items) {
      const title = normalizeTitle(item.title);
      if (title && !wanted.has(title)) wanted.set(title, normalizeDue(item.due));
    }
    if (wanted.size === 0) return [];
    await this.requireAgent(agentId, transaction);
    const titles = [...wanted.keys()];
    const sourceKey = taskSourceKey(source);
    // DO NOTHING waits for a concurrent insert of the same key to commit, then skips the row; the
    // SELECT after it (a new snapshot under READ COMMITTED) then sees that row. Rows go in sorted
    // by title, so two runs filing the same items take their key locks in one order: no deadlock.
    await this.sequelize.query(
      `INSERT INTO tasks (agent_id, title, status, due, source_message_id, source_key, created_at)
       SELECT $1, t.title, $2, t.due, $3, $4, now() FROM unnest($5::text[], $6::text[]) AS t(title, due)
        ORDER BY t.title COLLATE "C"
       ON CONFLICT (agent_id, source_key, title) DO NOTHING`,
      { bind: [agentId, INITIAL_STATUS, messageIdOf(source), sourceKey, titles, [...wanted.values()]], transaction },
    );
    const rows = await this.sequelize.query<TaskRow>(
      `SELECT ${COLUMNS} FROM tasks WHERE agent_id = $1 AND source_key = $2 AND title = ANY ($3::text[])`,
      { bind: [agentId, sourceKey, titles], type: QueryTypes.SELECT, transaction },
    );
    const byTitle = new Map(rows.map((r) => [r.title, r]));
    return titles.flatMap((title) => {
      const row = byTitle.get(title);
      return row ? [view(row)] : [];
    });
  }

  /** Oldest first. */
  async listTasks(agentId: number): Promise<TaskView[]> {
    const rows = await this.sequelize.query<TaskRow>(`SELECT ${COLUMNS} FROM tasks WHERE agent_id = :agentId ORDER BY id`, {
      replacements: { agentId },
      type: QueryTypes.SELECT,
    });
    return rows.map(view);
  }

  private async requireAgent(agentId: number, transaction?: Transaction): Promise<void> {
    const found = await this.sequelize.query('SELECT id FROM agents WHERE id = :agentId', {
      replacements: { agentId },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (found.length === 0) throw new NotFoundError(`Agent ${agentId}`);
  }
}

// Control characters (NUL among them, which PostgreSQL text cannot hold) count as spaces.
function oneLine(value: string, max: number): string {
  const line = value.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();
  return Array.from(line).slice(0, max).join('').trim();
}

// A model writes the titles: made storable first (SEMANTICS §13).
function normalizeTitle(title: string): string {
  return storableText(oneLine(title, MAX_TITLE_CHARS));
}

function normalizeDue(due: string | null | undefined): string | null {
  return oneLine(due ?? '', MAX_DUE_CHARS) || null;
}

function view(row: TaskRow): TaskView {
  return {
    id: Number(row.id),
    agent_id: Number(row.agent_id),
    title: row.title ?? '',
    status: row.status ?? '',
    due: row.due,
    source_message_id: row.source_message_id,
    created_at: row.created_at ? row.created_at.toISOString() : null,
  };
}
