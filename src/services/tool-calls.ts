// Writes and reads tool-call records (SEMANTICS §8): every execution, refusal and skip.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { ToolCallStatus } from '../../models/tool-call';

export interface ToolCallRecord {
  agent_id: number;
  tool_id: string;
  tool_name: string;
  status: ToolCallStatus;
  run: 'sender' | 'scheduled';
  routing_key: string | null;
  duration_ms: number;
  error: string | null;
}

export interface ToolCallView extends Omit<ToolCallRecord, 'agent_id'> {
  id: number;
  created_at: string | null;
}

/** Errors are stored for operators, bounded so a runaway message cannot bloat the table. */
const MAX_ERROR_LENGTH = 2000;

export async function recordToolCall(sequelize: Sequelize, record: ToolCallRecord): Promise<void> {
  await sequelize.query(
    `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error)
     VALUES (:agent_id, :tool_id, :tool_name, :status, :run, :routing_key, :duration_ms, :error)`,
    {
      replacements: {
        ...record,
        tool_id: record.tool_id.slice(0, 64),
        tool_name: record.tool_name.slice(0, 100),
        duration_ms: Math.max(0, Math.round(record.duration_ms)),
        error: record.error === null ? null : record.error.slice(0, MAX_ERROR_LENGTH),
      },
      type: QueryTypes.INSERT,
    },
  );
}

export async function listToolCalls(sequelize: Sequelize, agentId: number, limit: number): Promise<ToolCallView[]> {
  const rows = await sequelize.query<Omit<ToolCallView, 'created_at' | 'id'> & { id: string; created_at: Date | null }>(
    `SELECT id, tool_id, tool_name, status, run, routing_key, duration_ms, error, created_at
       FROM tool_calls WHERE agent_id = :agentId ORDER BY id DESC LIMIT :limit`,
    { replacements: { agentId, limit }, type: QueryTypes.SELECT },
  );
  // Rows the legacy application wrote into an adopted table may lack the newer columns.
  return rows.map((r) => ({ ...r, id: Number(r.id), created_at: r.created_at ? r.created_at.toISOString() : null }));
}
