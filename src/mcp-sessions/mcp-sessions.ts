// Gated tools served over MCP (SEMANTICS §14): sessions opened for one resolved run, and the
// Streamable HTTP endpoint an MCP client reaches them at with the session's bearer token. Every
// request reads the session from the database (so a closed or expired one ends on every instance at
// once), every call resolves the run again on the agent's policy as it stands and goes through the
// one dispatch path, and a listing that changed is told to the client (tools/list_changed) when a
// call finds it changed, when this instance's policy cache drops the agent, and on a short poll.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { HttpError, UnauthenticatedError } from '../errors';
import type { AgentToolSpec } from '../llm/agent-step';
import type { RunService } from '../run/run-service';
import type { ToolRun } from '../run/tool-run';
import { orUnavailable } from '../db/unavailable';
import { McpSessionStore, type McpSession, type OpenedSession } from './mcp-session-store';
import { callSessionTool, listingKey, sessionTools } from './session-tools';

export interface McpSessionsOptions {
  /** How long a session lasts from its opening. */
  ttlMs: number;
  /** How often live sessions are checked for a changed listing, a close or an expiry. */
  pollMs: number;
}

export interface McpSessionsDeps {
  store: McpSessionStore;
  runs: Pick<RunService, 'start'>;
  spec(id: string): AgentToolSpec | undefined;
  /** Told of toolgate's own faults while serving a session (its database away); must not throw. */
  onFault?(err: unknown): void;
}

/** What POST /agents/:id/mcp-sessions answers. */
export interface OpenedSessionView {
  session_id: string;
  url: string;
  token: string;
  expires_at: string;
  routing_key: string | null;
  tools_offered: string[];
  needs_approval: string[];
}

/** One MCP connection (its Mcp-Session-Id) on this instance, serving one toolgate session. */
interface Live {
  session: McpSession;
  server: Server;
  transport: StreamableHTTPServerTransport;
  /** What the client was last given by tools/list; undefined until it lists. */
  listed?: string;
}

const SERVER_INFO = { name: 'toolgate', version: '1' };

/**
 * The most connections one session holds on an instance: a client that initializes again (after a
 * restart, say) keeps working, and a token holder who initializes in a loop holds no more memory
 * than this; the oldest goes first.
 */
export const MAX_CONNECTIONS_PER_SESSION = 4;

const UNAUTHENTICATED =
  'This MCP endpoint takes the token of an open MCP session: open one with POST /api/agents/:id/mcp-sessions, or open a new one if it expired or was closed.';

export class McpSessions {
  /** This instance's MCP connections, by their Mcp-Session-Id. */
  readonly #live = new Map<string, Live>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: McpSessionsDeps,
    private readonly options: McpSessionsOptions,
  ) {}

  /** How many MCP clients are connected to this instance. */
  get connections(): number {
    return this.#live.size;
  }

  /** Opens a session for the run a request resolved (its access rules admitted it already). */
  async open(run: ToolRun, opener: { caller: string | null; role: string }, messageId: string | null): Promise<OpenedSession> {
    const tools = run.tools.filter((id) => this.deps.spec(id) !== undefined);
    return orUnavailable(
      this.deps.store.open({
        agentId: run.agentId,
        run: run.kind === 'scheduled' ? { kind: 'scheduled' } : { kind: 'sender', routing_key: run.routingKey },
        messageId,
        tools,
        openedBy: opener.caller,
        openedRole: opener.role,
        ttlMs: this.options.ttlMs,
      }),
    );
  }

  /** The answer for a session just opened: its URL resolved against where the request reached. */
  view(opened: OpenedSession, run: ToolRun, url: string): OpenedSessionView {
    const { session } = opened;
    return {
      session_id: session.id,
      url,
      token: opened.token,
      expires_at: session.expiresAt.toISOString(),
      routing_key: run.routingKey,
      tools_offered: [...session.tools],
      needs_approval: session.tools.filter((id) => run.needsApproval(id)),
    };
  }

  /** Closes the session (`caller`: only its opener's; 'any': an admin's) and its connections on this instance. */
  async close(agentId: number, sessionId: string, caller: string | null | 'any'): Promise<void> {
    await orUnavailable(this.deps.store.close(agentId, sessionId, caller));
    await this.#drop((live) => live.session.id === sessionId);
  }

  /** Whether a listing may have changed for this agent's sessions (its cached policy was dropped). */
  policyChanged(agentIds?: readonly number[]): void {
    if (this.#live.size === 0) return;
    void this.#recheck((live) => agentIds === undefined || agentIds.includes(live.session.agentId));
  }

  /** Ends every connection on this instance and stops the poll; the sessions stay in the database. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#drop(() => true);
  }

  /**
   * One request to the Streamable HTTP endpoint, with the bearer token it carried (null: none) and
   * its JSON body parsed: a token of no open session is a 401, before anything else is read.
   */
  async serve(req: IncomingMessage, res: ServerResponse, token: string | null, body: unknown): Promise<void> {
    const session = token === null ? null : await orUnavailable(this.deps.store.byToken(token));
    if (session === null) throw new UnauthenticatedError(UNAUTHENTICATED);
    const connection = req.headers['mcp-session-id'];
    if (typeof connection === 'string') {
      const live = this.#live.get(connection);
      // Another session's connection is no more this token's than an unknown one.
      if (!live || live.session.id !== session.id)
        return answer(res, 404, jsonRpcError(-32001, 'No such MCP connection here: send initialize again.'));
      live.session = session;
      return live.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return answer(
        res,
        400,
        jsonRpcError(ErrorCode.InvalidRequest, 'Start with an initialize request; later requests carry its Mcp-Session-Id.'),
      );
    }
    const mine = [...this.#live.values()].filter((l) => l.session.id === session.id);
    if (mine.length >= MAX_CONNECTIONS_PER_SESSION) {
      const oldest = new Set(mine.slice(0, mine.length - MAX_CONNECTIONS_PER_SESSION + 1));
      await this.#drop((l) => oldest.has(l));
    }
    const live = this.#connect(session);
    await live.server.connect(live.transport);
    await live.transport.handleRequest(req, res, body);
  }

  #connect(session: McpSession): Live {
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: true } },
      instructions:
        "The tools of one gated run of a toolgate agent. Each call is checked against the agent's policy as it stands: a refused, capped or pending call is a result that says so.",
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        this.#live.set(id, live);
        this.#startPoll();
      },
    });
    const live: Live = { session, server, transport };
    transport.onclose = () => {
      if (transport.sessionId) this.#live.delete(transport.sessionId);
    };
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const tools = sessionTools(live.session, await this.#run(live.session), this.deps.spec);
      live.listed = listingKey(tools);
      return { tools };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const run = await this.#run(live.session);
      const result = await callSessionTool(live.session, run, request.params.name, request.params.arguments);
      // A call that finds the listing changed (a revocation, say) tells the client on its own stream.
      const now = listingKey(sessionTools(live.session, run, this.deps.spec));
      if (live.listed !== undefined && now !== live.listed) {
        live.listed = now;
        await extra.sendNotification({ method: 'notifications/tools/list_changed' }).catch(() => undefined);
      }
      return result;
    });
    return live;
  }

  /** The session's run on the agent's policy as it stands; toolgate's own fault is an MCP error, never a grant. */
  async #run(session: McpSession): Promise<ToolRun> {
    try {
      return await this.deps.runs.start(session.agentId, session.run);
    } catch (err) {
      this.deps.onFault?.(err);
      const sentence = err instanceof HttpError ? err.message : 'toolgate could not resolve the run';
      throw new McpError(ErrorCode.InternalError, `${sentence} Nothing ran; try again.`);
    }
  }

  #startPoll(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#recheck(() => true), this.options.pollMs);
    this.#timer.unref();
  }

  /** Ends connections whose session closed or expired, and tells the others whose listing changed. */
  async #recheck(which: (live: Live) => boolean): Promise<void> {
    const lives = [...this.#live.values()].filter(which);
    if (lives.length === 0) return;
    try {
      const open = await this.deps.store.stillOpen([...new Set(lives.map((l) => l.session.id))]);
      await this.#drop((live) => lives.includes(live) && !open.has(live.session.id));
      for (const live of lives) {
        if (!open.has(live.session.id) || live.listed === undefined) continue;
        const now = listingKey(
          sessionTools(live.session, await this.deps.runs.start(live.session.agentId, live.session.run), this.deps.spec),
        );
        if (now === live.listed) continue;
        live.listed = now;
        await live.server.sendToolListChanged().catch(() => undefined);
      }
    } catch (err) {
      // Checked again at the next poll; every call checks for itself meanwhile.
      this.deps.onFault?.(err);
    }
  }

  async #drop(which: (live: Live) => boolean): Promise<void> {
    const gone = [...this.#live.entries()].filter(([, live]) => which(live));
    for (const [id, live] of gone) {
      this.#live.delete(id);
      await live.transport.close().catch(() => undefined);
      await live.server.close().catch(() => undefined);
    }
    if (this.#live.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

function jsonRpcError(code: number, message: string): Record<string, unknown> {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
