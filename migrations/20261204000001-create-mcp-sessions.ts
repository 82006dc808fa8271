// MCP sessions (SEMANTICS §14, "Gated tools served over MCP"): one run of one agent, resolved when
// the session opened, served to an MCP client that holds the session's bearer token. Only the
// token's SHA-256 is kept. `tools` is what the run was offered then; each call is checked again on
// the agent's policy as it stands, so the list can only shrink. `opened_by` names the caller (a
// digest of its token or host caller id) so that only it, or an admin, closes the session.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(
    `CREATE TABLE mcp_sessions (
       id UUID PRIMARY KEY,
       agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
       token_digest BYTEA NOT NULL UNIQUE,
       run_kind VARCHAR(10) NOT NULL CHECK (run_kind IN ('sender', 'scheduled')),
       routing_key TEXT,
       message_id TEXT,
       tools JSONB NOT NULL,
       opened_by TEXT,
       opened_role VARCHAR(10) NOT NULL,
       expires_at TIMESTAMPTZ NOT NULL,
       closed_at TIMESTAMPTZ,
       created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
       CHECK (run_kind = 'sender' OR routing_key IS NULL)
     );
     CREATE INDEX mcp_sessions_expires_at ON mcp_sessions (expires_at) WHERE closed_at IS NULL;
     COMMENT ON TABLE mcp_sessions IS 'created by toolgate';`,
  );
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE mcp_sessions;');
}
