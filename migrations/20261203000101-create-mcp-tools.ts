// MCP servers' tools, pinned (SEMANTICS §14): the definition a server gave of each tool (its title,
// description, input schema and annotations) the first time it listed it, with the digest of that
// definition, so that the manifest is built from what an operator accepted, not from what a server
// says now. A later listing that gives another definition keeps it as pending and holds the tool
// until an operator accepts it; a tool its server stops listing is stale.
// - server, tool_name: the server's name in the configuration and the tool's own name there, which
//   tools/call is sent; tool_id: the id toolkits store (`<server>__<tool>`), fixed once pinned.
// - status: active, held (a pending definition awaits acceptance) or stale (no longer listed).
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(
    `CREATE TABLE mcp_tools (
       id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       server VARCHAR(64) NOT NULL,
       tool_name VARCHAR(48) NOT NULL,
       tool_id VARCHAR(64) NOT NULL UNIQUE,
       digest CHAR(64) NOT NULL,
       definition JSONB NOT NULL,
       pending_digest CHAR(64),
       pending_definition JSONB,
       status VARCHAR(10) NOT NULL CHECK (status IN ('active', 'held', 'stale')),
       pinned_at TIMESTAMPTZ NOT NULL DEFAULT now(),
       updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
       UNIQUE (server, tool_name),
       CHECK ((status = 'held') = (pending_digest IS NOT NULL AND pending_definition IS NOT NULL))
     );
     COMMENT ON TABLE mcp_tools IS 'created by toolgate';`,
  );
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE mcp_tools;');
}
