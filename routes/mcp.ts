// The MCP servers and their pinned tools (admin; SEMANTICS §14): each server's state, its tools and
// their status, a listing on demand, and the acceptance of a held tool's new definition.
import { z } from 'zod';
import { toolIdSchema } from '../src/core/types';
import { serverNameSchema } from '../src/mcp/mcp-config';
import { mcpServerView, mcpToolView } from '../src/mcp/mcp-views';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

const serverParam = { name: serverNameSchema };

export const mcpRoutes = routeSection<Pick<RouteServices, 'mcp'>>('MCP servers', (route) => [
  route({
    method: 'get',
    path: '/mcp/servers',
    summary: 'The MCP servers',
    description:
      'Each configured server: its transport, whether it is connected, how many of its tools are active and held, the tools its latest listing skipped, and why it is unreachable. Never its env, headers or url.',
    roles: ['admin'],
    success: { status: 200, description: 'The servers', schema: z.array(mcpServerView) },
    handle: (tg) => tg.mcp.servers(),
  }),
  route({
    method: 'get',
    path: '/mcp/servers/:name/tools',
    params: serverParam,
    summary: "A server's pinned tools",
    description: 'Each tool the server ever listed: active, held (with what changed) or stale (no longer listed), with its digest.',
    roles: ['admin'],
    success: { status: 200, description: 'The tools', schema: z.array(mcpToolView) },
    handle: (tg, { params }) => tg.mcp.tools(params.name as string),
  }),
  route({
    method: 'post',
    path: '/mcp/servers/:name/refresh',
    params: serverParam,
    summary: "List a server's tools again",
    description:
      "Lists now, as toolgate does at start, on reconnecting and on the server's notifications/tools/list_changed: a new tool is pinned, a changed one held, a missing one stale. A server that is unreachable is tried now.",
    roles: ['admin'],
    success: { status: 200, description: 'The tools, after the listing', schema: z.array(mcpToolView) },
    handle: (tg, { params }) => tg.mcp.refresh(params.name as string),
  }),
  route({
    method: 'post',
    path: '/mcp/tools/:id/accept',
    params: { id: toolIdSchema },
    summary: "Accept a held tool's new definition",
    description: 'Pins the definition the server lists now: the tool is active again. A tool that is not held is a 409.',
    roles: ['admin'],
    success: { status: 200, description: 'The tool, active', schema: mcpToolView },
    errors: ['conflict'],
    handle: (tg, { params }) => tg.mcp.accept(params.id as string),
  }),
]);
