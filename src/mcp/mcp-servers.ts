// The configured MCP servers, together: their connections, their pinned tools, and what the
// registry holds of them. Every listing (at start, on the server's list_changed, on an operator's
// refresh, on connecting again) is planned against the pinned tools and written (pin-listing.ts);
// then the registry is given the pinned tools that are active or held, and the ids held are
// withheld from every run at dispatch (src/run/tool-run.ts) until an operator accepts them.
import { ConflictError, NotFoundError } from '../errors';
import type { ToolgateLogger } from '../toolgate-logger';
import type { ExternalTool, ToolRegistry } from '../tools/tool-registry';
import type { z } from 'zod';
import { jsonSchemaInput, schemaProblem } from './json-schema-input';
import type { McpServerConfig } from './mcp-config';
import { McpConnection, type Backoff } from './mcp-connection';
import { mcpTool } from './mcp-tool';
import { planListing, type PinnedTool, type SkippedTool } from './pin-listing';
import type { PinnedToolStore } from './pinned-tool-store';
import { definitionChanges } from './tool-definition';
import type { McpServerView, McpToolView } from './mcp-views';

export interface McpServersOptions {
  store: PinnedToolStore;
  registry: Pick<ToolRegistry, 'setExternal'>;
  env: NodeJS.ProcessEnv;
  logger?: ToolgateLogger;
  backoff?: Backoff;
  /** Told when the set of tool ids the manifest holds changed: compiled policies must be compiled again. */
  onManifestChanged(): void;
}

const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000 };

export class McpServers {
  /** The ids of the tools held now: refused at dispatch as `tool_changed`, whatever the policy grants. */
  readonly withheld = new Set<string>();
  readonly #servers: ReadonlyMap<string, { config: McpServerConfig; connection: McpConnection }>;
  readonly #pinned = new Map<string, PinnedTool[]>();
  readonly #skipped = new Map<string, SkippedTool[]>();
  readonly #listings = new Map<string, Promise<void>>();
  /** Compiled input schemas by definition digest: a listing that changes nothing compiles nothing. */
  #inputs = new Map<string, z.ZodType<Record<string, unknown>>>();
  #started: Promise<void> | null = null;
  #manifestIds = '';

  constructor(
    configs: readonly McpServerConfig[],
    private readonly options: McpServersOptions,
  ) {
    const backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.#servers = new Map(
      configs.map((config) => {
        const connection = new McpConnection(
          config,
          {
            onConnected: () => void this.#list(config.name),
            onToolsChanged: () => void this.#list(config.name),
            onUnreachable: (error) =>
              options.logger?.warn?.(
                { mcp_server: config.name, error },
                'an MCP server is unreachable: toolgate connects again with backoff',
              ),
          },
          backoff,
          options.env,
        );
        return [config.name, { config, connection }] as const;
      }),
    );
  }

  get configured(): boolean {
    return this.#servers.size > 0;
  }

  /**
   * Once: reads the pinned tools into the registry (so a server that is down still has its tools
   * listed), then connects every server and waits for each one's first listing, or its failure.
   */
  start(): Promise<void> {
    this.#started ??= (async () => {
      for (const tool of await this.options.store.of([...this.#servers.keys()])) {
        this.#pinned.set(tool.server, [...(this.#pinned.get(tool.server) ?? []), tool]);
      }
      this.#publish();
      await Promise.all(
        [...this.#servers.values()].map(async ({ config, connection }) => {
          await connection.connect();
          await this.#listings.get(config.name);
        }),
      );
    })();
    return this.#started;
  }

  servers(): McpServerView[] {
    return [...this.#servers.values()].map(({ config, connection }) => {
      const pinned = this.#pinned.get(config.name) ?? [];
      const { status, error } = connection.state;
      return {
        name: config.name,
        transport: config.transport,
        status,
        tools: pinned.filter((t) => t.status === 'active').length,
        held: pinned.filter((t) => t.status === 'held').length,
        skipped: this.#skipped.get(config.name) ?? [],
        ...(error === null ? {} : { error }),
      };
    });
  }

  tools(server: string): McpToolView[] {
    this.#server(server);
    return (this.#pinned.get(server) ?? []).map(toolView);
  }

  /** A server's pinned tools in full, each definition and any pending one: what the dashboard sets side by side. */
  pinned(server: string): readonly PinnedTool[] {
    this.#server(server);
    return this.#pinned.get(server) ?? [];
  }

  /** Lists the server's tools again now (connecting first when it is away), and answers its tools. */
  async refresh(server: string): Promise<McpToolView[]> {
    const { connection } = this.#server(server);
    // A server that is away is tried now, not at its next backoff; connecting lists its tools.
    if (connection.state.status === 'connected') await this.#list(server);
    else await connection.connect();
    await this.#listings.get(server);
    return this.tools(server);
  }

  /** Pins a held tool's new definition: it is active again, on this instance at once. */
  async accept(toolId: string): Promise<McpToolView> {
    const pinned = [...this.#pinned.values()].flat().find((t) => t.tool_id === toolId);
    if (!pinned) throw new NotFoundError(`The MCP tool ${toolId}`, 'name a tool GET /mcp/servers/:name/tools lists');
    if (pinned.status !== 'held' || pinned.pending_definition === null) {
      throw new ConflictError(`${toolId} is not held: there is no new definition to accept.`);
    }
    const problem = schemaProblem(pinned.pending_definition.input_schema);
    if (problem !== null) throw new ConflictError(`${toolId}'s new input schema cannot be checked, so it stays held: ${problem}`);
    const accepted = await this.options.store.accept(toolId);
    if (accepted === null) throw new ConflictError(`${toolId} is not held: there is no new definition to accept.`);
    this.#pinned.set(
      pinned.server,
      (this.#pinned.get(pinned.server) ?? []).map((t) => (t.tool_id === toolId ? accepted : t)),
    );
    this.#publish();
    return toolView(accepted);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#servers.values()].map(({ connection }) => connection.close()));
  }

  #server(name: string): { config: McpServerConfig; connection: McpConnection } {
    const server = this.#servers.get(name);
    if (!server) throw new NotFoundError(`The MCP server ${JSON.stringify(name)}`, 'name one GET /mcp/servers lists');
    return server;
  }

  /** Lists a server's tools and pins what the listing says; one listing per server at a time. */
  #list(server: string): Promise<void> {
    const before = this.#listings.get(server) ?? Promise.resolve();
    const listing = before.then(() => this.#listOnce(server));
    this.#listings.set(server, listing);
    return listing;
  }

  async #listOnce(server: string): Promise<void> {
    const { connection } = this.#server(server);
    const logger = this.options.logger;
    try {
      const listed = await connection.listTools();
      const plan = await this.options.store.replan(server, (pinned) => planListing(server, pinned, listed, schemaProblem));
      this.#pinned.set(server, plan.tools);
      this.#skipped.set(server, plan.skipped);
      this.#publish();
      if (plan.skipped.length > 0) {
        logger?.warn?.({ mcp_server: server, skipped: plan.skipped }, "some of an MCP server's tools were not taken");
      }
      for (const tool of plan.changed.filter((t) => t.status === 'held')) {
        logger?.warn?.(
          { mcp_server: server, tool: tool.tool_id },
          'an MCP tool changed its definition: it is held until an operator accepts the new one',
        );
      }
    } catch (err) {
      // The tools pinned before stay as they are; the connection has said why it is away, if it is.
      logger?.warn?.(
        { mcp_server: server, error: connection.redact(err instanceof Error ? err.message : String(err)) },
        "an MCP server's tools could not be listed: its pinned tools stay as they were",
      );
    }
  }

  /** Gives the registry every active or held pinned tool, and withholds the held ones. */
  #publish(): void {
    const tools: ExternalTool[] = [];
    const inputs = new Map<string, z.ZodType<Record<string, unknown>>>();
    this.withheld.clear();
    for (const { config, connection } of this.#servers.values()) {
      for (const pinned of this.#pinned.get(config.name) ?? []) {
        if (pinned.status === 'stale') continue;
        const input = this.#inputs.get(pinned.digest) ?? jsonSchemaInput(pinned.definition.input_schema);
        inputs.set(pinned.digest, input);
        tools.push(mcpTool(pinned, connection, input, config.timeoutMs));
        if (pinned.status === 'held') this.withheld.add(pinned.tool_id);
      }
    }
    this.#inputs = inputs;
    this.options.registry.setExternal(tools);
    const ids = tools.map((t) => t.definition.id).join(',');
    if (ids !== this.#manifestIds) {
      this.#manifestIds = ids;
      this.options.onManifestChanged();
    }
  }
}

function toolView(tool: PinnedTool): McpToolView {
  return {
    id: tool.tool_id,
    name: tool.tool_name,
    status: tool.status,
    digest: tool.digest,
    ...(tool.pending_digest === null ? {} : { pending_digest: tool.pending_digest }),
    ...(tool.pending_definition === null ? {} : { changes: definitionChanges(tool.definition, tool.pending_definition) }),
  };
}
