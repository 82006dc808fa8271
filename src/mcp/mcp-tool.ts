// A pinned MCP tool as the registry holds any tool: its manifest entry, its input checked against
// the pinned input schema, and an implementation that sends tools/call to its server. A result the
// server marks isError, a connection that fails and a deadline that passes are all thrown, so the
// one dispatch path records a failure the model reads: never a 5xx, and never retried here.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ExternalTool } from '../tools/tool-registry';
import type { McpConnection } from './mcp-connection';
import type { PinnedTool } from './pin-listing';
import { manifestTextOf } from './tool-definition';

/** What a call gave the model: the server's content, and its structured content when it has some. */
export interface McpToolOutput {
  content: CallToolResult['content'];
  structuredContent?: Record<string, unknown>;
}

export function mcpTool(
  pinned: PinnedTool,
  connection: Pick<McpConnection, 'callTool'>,
  input: z.ZodType<Record<string, unknown>>,
  timeoutMs: number,
): ExternalTool {
  const { display_name, summary } = manifestTextOf(pinned.tool_name, pinned.server, pinned.definition);
  return {
    definition: { id: pinned.tool_id, display_name, summary, kind: 'gate', builtin: false },
    input_schema: pinned.definition.input_schema,
    timeoutMs,
    implementation: {
      id: pinned.tool_id,
      input,
      async execute(checked: Record<string, unknown>, context): Promise<McpToolOutput> {
        const result = await connection.callTool(pinned.tool_name, checked, context.call_id, timeoutMs, context.trace_context);
        if (result.isError === true) throw new Error(textOf(result) || `${pinned.tool_name} answered an error with no text`);
        return result.structuredContent === undefined
          ? { content: result.content }
          : { content: result.content, structuredContent: result.structuredContent };
      },
    },
  };
}

/** The text parts of a result, one after another: what an error says. */
function textOf(result: CallToolResult): string {
  return result.content
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('\n')
    .trim();
}
