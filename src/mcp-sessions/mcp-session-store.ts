// The MCP sessions in the database (migrations/20261204000001-create-mcp-sessions.ts): opened for one
// resolved run, found by the digest of their bearer token, closed by their opener or an admin. A
// session counts only while it is open and unexpired, read in the database's own clock, so every
// instance agrees on when one ends.
import { randomBytes, randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { z } from 'zod';
import { tokenDigest } from '../core/token-digest';
import { NotFoundError } from '../errors';

/** The run a session serves: a sender's, by routing key (null: no key, so only open gates), or a scheduled one. */
export type SessionRun = { kind: 'sender'; routing_key: string | null } | { kind: 'scheduled' };

const sessionRow = z.object({
  id: z.string(),
  agent_id: z.number().int(),
  run_kind: z.enum(['sender', 'scheduled']),
  routing_key: z.string().nullable(),
  message_id: z.string().nullable(),
  tools: z.array(z.string()),
  opened_by: z.string().nullable(),
  expires_at: z.coerce.date(),
});

export interface McpSession {
  id: string;
  agentId: number;
  run: SessionRun;
  /** The inbound message's Message-ID, for an approval request a call files. */
  messageId: string | null;
  /** What the run was offered when the session opened: each call may use these, if the policy still grants them. */
  tools: readonly string[];
  /** Who opened it (a digest of the caller), for the close that only it or an admin may make. */
  openedBy: string | null;
  expiresAt: Date;
}

export interface OpenedSession {
  session: McpSession;
  /** The bearer token: given once, here; only its digest is kept. */
  token: string;
}

export interface NewSession {
  agentId: number;
  run: SessionRun;
  messageId: string | null;
  tools: readonly string[];
  openedBy: string | null;
  openedRole: string;
  ttlMs: number;
}

/** The prefix of a session token, so that one found in a log or a config file says what it is. */
const TOKEN_PREFIX = 'tgmcp_';

const COLUMNS = 'id, agent_id, run_kind, routing_key, message_id, tools, opened_by, expires_at';

export class McpSessionStore {
  constructor(private readonly sequelize: Sequelize) {}

  async open(given: NewSession): Promise<OpenedSession> {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const [row] = await this.sequelize.query(
      `INSERT INTO mcp_sessions (id, agent_id, token_digest, run_kind, routing_key, message_id, tools, opened_by, opened_role, expires_at)
       VALUES (:id, :agent_id, :digest, :run_kind, :routing_key, :message_id, :tools::jsonb, :opened_by, :opened_role,
               now() + make_interval(secs => :ttl_s))
       RETURNING ${COLUMNS}`,
      {
        replacements: {
          id: randomUUID(),
          agent_id: given.agentId,
          digest: tokenDigest(token),
          run_kind: given.run.kind,
          routing_key: given.run.kind === 'sender' ? given.run.routing_key : null,
          message_id: given.messageId,
          tools: JSON.stringify(given.tools),
          opened_by: given.openedBy,
          opened_role: given.openedRole,
          ttl_s: given.ttlMs / 1000,
        },
        type: QueryTypes.SELECT,
      },
    );
    return { session: sessionOf(row), token };
  }

  /** The open, unexpired session this token belongs to; null for any other token. */
  async byToken(token: string): Promise<McpSession | null> {
    if (!token.startsWith(TOKEN_PREFIX)) return null;
    const [row] = await this.sequelize.query(
      `SELECT ${COLUMNS} FROM mcp_sessions WHERE token_digest = :digest AND closed_at IS NULL AND expires_at > now()`,
      { replacements: { digest: tokenDigest(token) }, type: QueryTypes.SELECT },
    );
    return row === undefined ? null : sessionOf(row);
  }

  /** Of these session ids, the ones still open and unexpired. */
  async stillOpen(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.sequelize.query<{ id: string }>(
      'SELECT id FROM mcp_sessions WHERE id IN (:ids) AND closed_at IS NULL AND expires_at > now()',
      { replacements: { ids }, type: QueryTypes.SELECT },
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Closes the agent's session, when `caller` opened it (any caller: null); a 404 for a session of
   * another agent, another caller's, or one already closed, so nobody learns which ids exist.
   */
  async close(agentId: number, sessionId: string, caller: string | null | 'any'): Promise<void> {
    const closed = await this.sequelize.query(
      `UPDATE mcp_sessions SET closed_at = now()
        WHERE id::text = :id AND agent_id = :agent_id AND closed_at IS NULL
          AND (:any OR opened_by IS NOT DISTINCT FROM :caller)
        RETURNING id`,
      {
        replacements: { id: sessionId, agent_id: agentId, any: caller === 'any', caller: caller === 'any' ? null : caller },
        type: QueryTypes.SELECT,
      },
    );
    if (closed.length !== 1) throw new NotFoundError(`MCP session ${sessionId} of agent ${agentId}`);
  }
}

function sessionOf(row: unknown): McpSession {
  const r = sessionRow.parse(row);
  return {
    id: r.id,
    agentId: r.agent_id,
    run: r.run_kind === 'scheduled' ? { kind: 'scheduled' } : { kind: 'sender', routing_key: r.routing_key },
    messageId: r.message_id,
    tools: r.tools,
    openedBy: r.opened_by,
    expiresAt: r.expires_at,
  };
}
