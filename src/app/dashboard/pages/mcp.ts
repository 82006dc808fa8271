// MCP servers: each configured server with its connection and its tools' states, Refresh (lists its
// tools again now), and a server's tools, a held one's pinned and pending definitions side by side
// with Accept. Both actions are the admin API's own service calls (SEMANTICS §14).
import { Router, type Request } from 'express';
import { ConflictError, NotFoundError } from '../../../errors';
import type { PinStatus } from '../../../mcp/pin-listing';
import type { DashboardServices } from '../dashboard-services';
import { pageContext, redirectWith } from '../form-data';
import { renderPage } from '../render';
import { McpServersPage, McpToolsPage, type ServerRow } from '../views/mcp';

export function mcpPages(d: DashboardServices): Router {
  const router = Router();

  const serverRows = (): ServerRow[] =>
    d.mcp.servers().map((server) => ({ ...server, counts: countStates(d.mcp.pinned(server.name).map((t) => t.status)) }));

  /** The server the path names, as the servers page lists it: any other name is a 404 that says where to pick one. */
  const namedServer = (req: Request): ServerRow => {
    const name = String(req.params.name);
    const server = serverRows().find((s) => s.name === name);
    if (!server) throw new NotFoundError(`The MCP server ${JSON.stringify(name.slice(0, 100))}`, 'pick one from the MCP servers page');
    return server;
  };

  router.get('/mcp', (req, res) => {
    renderPage(res, 200, McpServersPage({ ctx: pageContext(req), servers: serverRows() }));
  });

  router.get('/mcp/servers/:name', (req, res) => {
    const server = namedServer(req);
    renderPage(res, 200, McpToolsPage({ ctx: pageContext(req), server, tools: d.mcp.pinned(server.name) }));
  });

  router.post('/mcp/servers/:name/refresh', async (req, res) => {
    const server = namedServer(req);
    const tools = await d.mcp.refresh(server.name);
    const now = serverRows().find((s) => s.name === server.name) ?? server;
    const counts = countStates(tools.map((t) => t.status));
    const listed =
      now.status === 'connected'
        ? `${server.name}'s tools were listed again: ${counts.active} active, ${counts.held} held, ${counts.stale} stale.`
        : `${server.name} is unreachable, so its tools stay as they were pinned; toolgate keeps trying to connect.`;
    await redirectWith(req, res, '/mcp', listed);
  });

  router.post('/mcp/tools/:id/accept', async (req, res) => {
    const id = String(req.params.id);
    const server = d.mcp
      .servers()
      .map((s) => s.name)
      .find((name) => d.mcp.pinned(name).some((t) => t.tool_id === id));
    if (server === undefined)
      throw new NotFoundError(`The MCP tool ${JSON.stringify(id.slice(0, 100))}`, "pick one from its server's tools page");
    const back = `/mcp/servers/${encodeURIComponent(server)}`;
    try {
      await d.mcp.accept(id);
    } catch (err) {
      // Accepted meanwhile (by another operator, or the server listing its pinned definition again),
      // or a new schema that cannot be checked: the operator reads why, and nothing changed.
      if (err instanceof ConflictError) return redirectWith(req, res, back, err.message);
      throw err;
    }
    await redirectWith(req, res, back, `${id}'s new definition is pinned: it is active, and offered again where a toolkit grants it.`);
  });
  return router;
}

function countStates(states: readonly PinStatus[]): Record<PinStatus, number> {
  const counts: Record<PinStatus, number> = { active: 0, held: 0, stale: 0 };
  for (const state of states) counts[state] += 1;
  return counts;
}
