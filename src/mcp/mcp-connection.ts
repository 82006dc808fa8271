// One MCP server, spoken to through the official SDK: a child process over stdio, or Streamable
// HTTP. It connects, lists its tools, is told when they change, calls them, and when the server
// goes away (the process exits, the address stops answering) connects again with capped
// exponential backoff. Its state is what the admin API shows: connected or unreachable, and why,
// with every `${VAR}` value cut out of the words.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './mcp-config';
import { connectParams, redact } from './mcp-transport-params';
import { ownSignalFetch } from './own-signal-fetch';

export type ConnectionStatus = 'connected' | 'unreachable';

export interface ConnectionState {
  status: ConnectionStatus;
  /** Why it is unreachable, secrets cut out; null while connected. */
  error: string | null;
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export interface ConnectionEvents {
  /** Connected (at start, or again after it went away): its tools are to be listed. */
  onConnected(): void;
  /** The server said its tools changed (notifications/tools/list_changed). */
  onToolsChanged(): void;
  /** Went from connected to unreachable, or failed to connect: why, secrets cut out. */
  onUnreachable(error: string): void;
}

/** How long connecting (the initialize exchange) may take before it counts as failed. */
const CONNECT_TIMEOUT_MS = 10_000;
/** The last characters of a stdio server's stderr kept to say why it stopped. */
const STDERR_TAIL = 500;

const CLIENT_INFO = { name: 'toolgate', version: '1' };

export class McpConnection {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  #state: ConnectionState = { status: 'unreachable', error: 'not connected yet' };
  #client: Client | null = null;
  #secrets: string[] = [];
  #stderr = '';
  #attempt = 0;
  #retry: NodeJS.Timeout | undefined;
  #connecting: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly config: McpServerConfig,
    private readonly events: ConnectionEvents,
    private readonly backoff: Backoff,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.name = config.name;
    this.transport = config.transport;
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** Connects now, once; on failure it tries again with backoff, and this still resolves. */
  connect(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#connecting ??= this.#connectOnce().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #connectOnce(): Promise<void> {
    clearTimeout(this.#retry);
    const { params, secrets } = connectParams(this.config, this.env);
    this.#secrets = secrets;
    this.#stderr = '';
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.events.onToolsChanged());
    let transport: Transport;
    if (params.transport === 'stdio') {
      const stdio = new StdioClientTransport({ ...params, stderr: 'pipe' });
      // Kept short and only to say why it stopped: a server's stderr is its own, and never shown whole.
      stdio.stderr?.on('data', (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      transport = stdio;
    } else {
      transport = new StreamableHTTPClientTransport(params.url, { requestInit: { headers: params.headers }, fetch: ownSignalFetch });
    }
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (err) {
      await client.close().catch(() => undefined);
      this.#wentAway(this.#words(err, 'could not connect'));
      return;
    }
    if (this.#closed) {
      await client.close().catch(() => undefined);
      return;
    }
    this.#client = client;
    client.onclose = () => {
      if (this.#client !== client) return;
      this.#client = null;
      this.#wentAway(this.#words(undefined, this.transport === 'stdio' ? 'the server process exited' : 'the connection closed'));
    };
    this.#attempt = 0;
    this.#state = { status: 'connected', error: null };
    this.events.onConnected();
  }

  /** Every tool the server lists, page after page. */
  async listTools(): Promise<unknown[]> {
    const client = this.#connected();
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#guarded(client, () => client.listTools(cursor === undefined ? undefined : { cursor }));
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * Calls one tool, once, within `timeoutMs`, with toolgate's record id in `_meta`, and beside it
   * the W3C trace context of the call's span when one is recorded (`traceparent`, `tracestate`), so
   * a traced server continues the trace under it. Whatever goes wrong (the server is away, the
   * deadline passes, it answers an error) is thrown, for the dispatch path to record as the call's
   * failure; nothing is retried here.
   */
  async callTool(
    name: string,
    input: Record<string, unknown>,
    callId: number,
    timeoutMs: number,
    traceContext?: Readonly<Record<string, string>>,
  ): Promise<CallToolResult> {
    const client = this.#connected();
    const _meta = { ...traceContext, 'toolgate/call_id': callId };
    const result = await this.#guarded(client, () => client.callTool({ name, arguments: input, _meta }, undefined, { timeout: timeoutMs }));
    return result as CallToolResult;
  }

  /** Cuts every secret of this server's configuration out of a text about it. */
  redact(text: string): string {
    return redact(text, this.#secrets);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#connecting;
    const client = this.#client;
    this.#client = null;
    await client?.close().catch(() => undefined);
  }

  #connected(): Client {
    if (this.#client === null) throw new Error(`the MCP server ${this.name} is unreachable: ${this.#state.error ?? 'not connected'}`);
    return this.#client;
  }

  /** Runs a request; a fault of the connection itself (not the server's answer, nor a deadline) makes it reconnect. */
  async #guarded<T>(client: Client, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      const words = this.#words(err, 'the request failed');
      if (isConnectionFault(err) && this.#client === client) {
        this.#client = null;
        void client.close().catch(() => undefined);
        this.#wentAway(words);
      }
      // The cause may quote a secret of the configuration: its words, with the secrets cut, are all that is kept.
      // eslint-disable-next-line preserve-caught-error
      throw new Error(words);
    }
  }

  #wentAway(error: string): void {
    this.#state = { status: 'unreachable', error };
    this.events.onUnreachable(error);
    if (this.#closed) return;
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** this.#attempt);
    this.#attempt += 1;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => void this.connect(), delay);
    this.#retry.unref();
  }

  /** What went wrong, in words that hold no secret: the error's message, and a stdio server's last stderr. */
  #words(err: unknown, what: string): string {
    const message = err instanceof Error ? err.message : '';
    const stderr = this.#stderr.trim().split('\n').slice(-1)[0] ?? '';
    const text = [message ? `${what}: ${message}` : what, stderr ? `(its stderr: ${stderr})` : ''].filter(Boolean).join(' ');
    return this.redact(text).slice(0, 1000);
  }
}

/** A fault of the connection: anything but the server's own JSON-RPC answer or a deadline. */
function isConnectionFault(err: unknown): boolean {
  if (!(err instanceof McpError)) return true;
  return err.code === ErrorCode.ConnectionClosed;
}
