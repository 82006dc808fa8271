// The pinned MCP tools in the database (migrations/20261203000101-create-mcp-tools.ts). A listing is
// planned against the server's rows as they stand, under a lock per server, so that two instances
// listing the same server, or an operator accepting meanwhile, never undo each other's writes.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { PIN_STATUSES, type PinnedTool } from './pin-listing';
import { pinnedDefinitionSchema } from './tool-definition';

const rowSchema = z.object({
  server: z.string(),
  tool_name: z.string(),
  tool_id: z.string(),
  digest: z.string(),
  definition: pinnedDefinitionSchema,
  pending_digest: z.string().nullable(),
  pending_definition: pinnedDefinitionSchema.nullable(),
  status: z.enum(PIN_STATUSES),
});

const COLUMNS = 'server, tool_name, tool_id, digest, definition, pending_digest, pending_definition, status';

export class PinnedToolStore {
  constructor(private readonly sequelize: Sequelize) {}

  /** Every pinned tool of these servers, by server and then the order they were pinned. */
  async of(servers: readonly string[]): Promise<PinnedTool[]> {
    if (servers.length === 0) return [];
    const rows = await this.sequelize.query(`SELECT ${COLUMNS} FROM mcp_tools WHERE server IN (:servers) ORDER BY server, id`, {
      replacements: { servers },
      type: QueryTypes.SELECT,
    });
    return rows.map((row) => rowSchema.parse(row));
  }

  /**
   * Plans a listing against the server's rows as they stand, and writes what the plan changes, in
   * one transaction that holds the server's lock: the plan's tools, as written.
   */
  async replan<P extends { tools: PinnedTool[]; changed: PinnedTool[] }>(server: string, plan: (pinned: PinnedTool[]) => P): Promise<P> {
    return this.sequelize.transaction(async (transaction) => {
      await this.sequelize.query("SELECT pg_advisory_xact_lock(hashtext('toolgate mcp_tools ' || :server))", {
        replacements: { server },
        transaction,
      });
      const rows = await this.sequelize.query(`SELECT ${COLUMNS} FROM mcp_tools WHERE server = :server ORDER BY id`, {
        replacements: { server },
        type: QueryTypes.SELECT,
        transaction,
      });
      const planned = plan(rows.map((row) => rowSchema.parse(row)));
      for (const tool of planned.changed) await this.write(tool, transaction);
      return planned;
    });
  }

  /** Pins a held tool's pending definition: the tool as it is now, or null when it is not held. */
  async accept(toolId: string): Promise<PinnedTool | null> {
    const [rows] = await this.sequelize.query(
      `UPDATE mcp_tools SET digest = pending_digest, definition = pending_definition, pending_digest = NULL,
         pending_definition = NULL, status = 'active', updated_at = now()
       WHERE tool_id = :toolId AND status = 'held' RETURNING ${COLUMNS}`,
      { replacements: { toolId } },
    );
    const [row] = rows as unknown[];
    return row === undefined ? null : rowSchema.parse(row);
  }

  private async write(tool: PinnedTool, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO mcp_tools (${COLUMNS})
       VALUES (:server, :tool_name, :tool_id, :digest, :definition, :pending_digest, :pending_definition, :status)
       ON CONFLICT (server, tool_name) DO UPDATE SET digest = EXCLUDED.digest, definition = EXCLUDED.definition,
         pending_digest = EXCLUDED.pending_digest, pending_definition = EXCLUDED.pending_definition, status = EXCLUDED.status,
         updated_at = now()`,
      {
        replacements: {
          ...tool,
          definition: JSON.stringify(tool.definition),
          pending_definition: tool.pending_definition === null ? null : JSON.stringify(tool.pending_definition),
        },
        transaction,
      },
    );
  }
}
