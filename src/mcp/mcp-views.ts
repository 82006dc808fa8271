// What the admin API shows of the MCP servers and their pinned tools, one schema each: the routes'
// reference describes these, and the views' types come from them. Nothing here holds a value of a
// server's env, headers or url.
import { z } from 'zod';
import { PIN_STATUSES } from './pin-listing';
import { DEFINITION_PARTS } from './tool-definition';

export const mcpServerView = z.object({
  name: z.string(),
  transport: z.enum(['stdio', 'http']),
  status: z.enum(['connected', 'unreachable']),
  tools: z.number().int().describe('its active tools: offered where a toolkit grants them'),
  held: z.number().int().describe('its held tools: their definition changed, and waits for an operator'),
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })).describe('tools of its latest listing that were not taken, and why'),
  error: z.string().optional().describe('while unreachable: why, with every ${VAR} value cut out'),
});
export type McpServerView = z.infer<typeof mcpServerView>;

export const definitionChangesSchema = z.partialRecord(z.enum(DEFINITION_PARTS), z.object({ pinned: z.unknown(), listed: z.unknown() }));

export const mcpToolView = z.object({
  id: z.string().describe('the tool id toolkits store: <server>__<tool>'),
  name: z.string().describe("the tool's own name on its server, which tools/call is sent"),
  status: z.enum(PIN_STATUSES),
  digest: z.string().describe("SHA-256 of the pinned definition's canonical JSON"),
  pending_digest: z.string().optional().describe('held: the digest of the definition the server lists now'),
  changes: definitionChangesSchema.optional().describe('held: each part that changed, pinned and listed'),
});
export type McpToolView = z.infer<typeof mcpToolView>;
