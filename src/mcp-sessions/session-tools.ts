// What an MCP session's client is shown and what its calls give (SEMANTICS §14, "Gated tools served
// over MCP"): the tools of the session's run that the agent's policy still grants, as MCP tools, and
// each call's outcome from the one dispatch path as an MCP result. A refusal, a cap, a filed approval
// request and a tool's own failure are results the client's model reads (isError), never a
// protocol error; only toolgate's own fault (its database away) is one.
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentToolSpec } from '../llm/agent-step';
import { HttpError, ValidationError } from '../errors';
import type { CallStep, ToolRun } from '../run/tool-run';
import type { McpSession } from './mcp-session-store';

/** The `_meta` keys toolgate adds to a listed tool and to a result. */
export const META = {
  needsApproval: 'toolgate/needs_approval',
  recordStatus: 'toolgate/status',
  approvalRequestId: 'toolgate/approval_request_id',
} as const;

const APPROVAL_NOTE = 'Needs approval: a call is filed as an approval request for an approver to decide, and does not run now.';

/**
 * The session's tools on this run: those it was offered when it opened that the run (resolved on
 * the policy as it stands) still offers, in the order of their ids. A run whose sender the access
 * rules now refuse has none.
 */
export function sessionTools(session: McpSession, run: ToolRun, spec: (id: string) => AgentToolSpec | undefined): Tool[] {
  if (run.access?.admitted === false) return [];
  return session.tools.flatMap((id) => {
    const tool = run.offers(id) ? spec(id) : undefined;
    if (!tool) return [];
    const needsApproval = run.needsApproval(id);
    return [
      {
        name: id,
        title: tool.display_name,
        description: needsApproval ? `${tool.summary}\n\n${APPROVAL_NOTE}` : tool.summary,
        inputSchema: tool.input_schema as Tool['inputSchema'],
        _meta: { [META.needsApproval]: needsApproval },
      },
    ];
  });
}

/** A fingerprint of a listing, to tell whether the client's list changed since it last read it. */
export function listingKey(tools: readonly Tool[]): string {
  return tools.map((t) => `${t.name}${t._meta?.[META.needsApproval] === true ? '?' : ''}`).join(' ');
}

/**
 * One tools/call of the session, through the run's one door (ToolRun.call). A tool the session was
 * not offered when it opened is refused (and recorded) even if the policy grants it now: a session
 * never gains a tool.
 */
export async function callSessionTool(session: McpSession, run: ToolRun, name: string, args: unknown): Promise<CallToolResult> {
  try {
    if (run.access?.admitted === false) {
      await run.refuseSender();
      return refusal("The agent's access rules no longer admit this session's sender: nothing ran.", 'denied');
    }
    const step = await run.call(name, args ?? {}, {
      among: session.tools,
      origin: { thread_id: null, run_id: null, message_id: session.messageId },
      inputAt: ['body', 'arguments'],
    });
    return resultOf(step);
  } catch (err) {
    // A caller's error met before the call (a refused sender's record): a result to read. toolgate's
    // own faults (5xx: its database away) stay errors, and reach the client as one.
    if (err instanceof HttpError && err.status < 500) return refusal(sentenceOf(err), err.code);
    throw err;
  }
}

function resultOf(step: CallStep): CallToolResult {
  switch (step.status) {
    case 'success':
      return successOf(step.output);
    case 'failure':
      return { content: [{ type: 'text', text: step.error }], isError: true, _meta: { [META.recordStatus]: 'failure' } };
    case 'pending_approval':
      return {
        content: [
          {
            type: 'text',
            text: `Filed as approval request ${step.request.id}: it runs once an approver approves it, and nothing ran now.`,
          },
        ],
        isError: true,
        _meta: { [META.recordStatus]: 'pending_approval', [META.approvalRequestId]: step.request.id },
      };
    default:
      // Nothing ran (refused, over a cap, an input the schema refuses): a result the client's model reads.
      return refusal(sentenceOf(step.error), step.error.code);
  }
}

/** An MCP server's own result passes as it came; any other output is its JSON, and its structured content when an object. */
function successOf(output: unknown): CallToolResult {
  const meta = { [META.recordStatus]: 'success' };
  if (isMcpOutput(output)) return { ...output, _meta: meta };
  const text = output === undefined ? 'null' : JSON.stringify(output);
  const structured = typeof output === 'object' && output !== null && !Array.isArray(output);
  return {
    content: [{ type: 'text', text }],
    ...(structured ? { structuredContent: output as Record<string, unknown> } : {}),
    _meta: meta,
  };
}

function isMcpOutput(output: unknown): output is Pick<CallToolResult, 'content' | 'structuredContent'> {
  return typeof output === 'object' && output !== null && Array.isArray((output as { content?: unknown }).content);
}

function refusal(text: string, code: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true, _meta: { [META.recordStatus]: code } };
}

/** What a refusal says: its sentence; for an input the schema refuses, each field and what is wrong with it. */
function sentenceOf(err: HttpError): string {
  if (err instanceof ValidationError) {
    return `The arguments do not match the tool's input schema, so nothing ran: ${err.issues
      .map((i) => `${i.loc.slice(2).join('.') || 'arguments'}: ${i.msg}`)
      .join('; ')}`;
  }
  return err.message;
}
