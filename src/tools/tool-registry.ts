// The registry a toolgate instance runs with: the manifest (pure definitions, in the core) plus, for
// every tool, what calls it: an input schema, an implementation, the legacy name its records carry,
// and the spec a model is offered (the JSON Schema of its input, from zod's own conversion).
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { BUILTIN_LEGACY_NAMES, createManifest, type ToolManifest } from '../core/tool-manifest';
import type { ToolDefinition, ToolKind, DispatchKind } from '../core/types';
import { ToolgateConfigError } from '../errors';
import { OPTION_DEFAULTS } from '../option-bounds';
import { checkHostTools } from './check-host-tools';
import type { AgentToolSpec, InboundMessage } from '../llm/agent-step';

export interface ToolContext {
  agent_id: number;
  /** The agent the run is for: its name and prompt steer a model the tool may ask. */
  agent: { id: number; name: string; system_prompt: string | null };
  run: DispatchKind;
  routing_key: string | null;
  sequelize: Sequelize;
  /** The message the run handles, when it handles one (an agent run's inbound message). */
  message?: InboundMessage;
  /** Names this run: the same for every call within it, another for the next run. */
  run_key: string;
  /**
   * This call's tool-call record (SEMANTICS §8): written before the tool runs, and never run again.
   * A tool that calls an outside service and retries that call itself can send it as the service's
   * idempotency key, so its own retries never act twice (SEMANTICS §13).
   */
  call_id: number;
  /**
   * The W3C trace context of this call's `execute_tool` span (`traceparent`, and `tracestate` when
   * it has one), when a tracing SDK records the span (SEMANTICS §16). The tool already runs with the
   * span active, so an instrumented client continues the trace by itself; this is for a call no
   * instrumentation reaches (toolgate sends it in an MCP server's `_meta`).
   */
  trace_context?: Readonly<Record<string, string>>;
  /**
   * Set when this call is an approved request running (SEMANTICS §12): `routing_key` is then the
   * requester's, and `approved_by` the approver's routing key, or `admin` / `dashboard`.
   */
  approval?: { request_id: number; approved_by: string };
  /**
   * Calls another tool within this run, through the same dispatch path: refused (and recorded) when
   * the run was not offered it, recorded when it runs; its output, or the error it threw.
   */
  callTool(toolId: string, input: unknown): Promise<unknown>;
}

/** What calls a tool: its input schema and its implementation. */
export interface ToolImplementation<S extends z.ZodType = z.ZodType, R = unknown> {
  id: string;
  input: S;
  // A method, not a property: the registry holds tools of every input type side by side.
  execute(input: z.infer<S>, context: ToolContext): R | Promise<R>;
}

export interface HostTool<S extends z.ZodType = z.ZodType, R = unknown> extends ToolImplementation<S, R> {
  display_name: string;
  summary: string;
  /** Host tools are dispatched by name, so a missing grant refuses them: `gate` unless said. */
  kind?: ToolKind;
  /** The name tool-call records carry; the id unless the host's history used another. */
  legacy_name?: string;
  /**
   * The longest one call may run, in ms (default 60,000). toolgate does not stop a tool; this says
   * when a `started` record whose instance died may be called interrupted (SEMANTICS §13).
   */
  timeoutMs?: number;
}

/** Identity, for inference: `defineTool({ input: z.object(...), execute: (input) => ... })`. */
export function defineTool<S extends z.ZodType, R>(tool: HostTool<S, R>): HostTool<S, R> {
  return tool;
}

/**
 * A tool that joins the registry at run time, not in code: an MCP server's pinned tool (src/mcp/).
 * Its input is checked by its zod schema as any tool's is; the model is offered `input_schema`, the
 * JSON Schema its server gave, which that zod schema checks by a validator of its own.
 */
export interface ExternalTool {
  definition: ToolDefinition;
  implementation: ToolImplementation;
  input_schema: Record<string, unknown>;
  /** The longest one call may run, in ms. */
  timeoutMs: number;
}

export class ToolRegistry {
  readonly manifest: ToolManifest;
  private external: ReadonlyMap<string, ExternalTool> = new Map();
  private readonly hostTools: ReadonlyMap<string, HostTool>;
  private readonly implementations: ReadonlyMap<string, ToolImplementation>;
  private readonly specs: ReadonlyMap<string, AgentToolSpec>;

  /** `builtins`: the implementations toolgate gives its own tools (tools/builtin-tools.ts). */
  constructor(hostTools: readonly HostTool[] = [], builtins: readonly ToolImplementation[] = []) {
    checkHostTools(hostTools);
    const definitions: ToolDefinition[] = hostTools.map((t) => ({
      id: t.id,
      display_name: t.display_name,
      summary: t.summary,
      kind: t.kind ?? 'gate',
      builtin: false,
    }));
    this.manifest = createManifest(definitions);
    this.hostTools = new Map(hostTools.map((t) => [t.id, t]));
    const implementations = new Map<string, ToolImplementation>([
      ...builtins.filter((b) => this.manifest.get(b.id)?.builtin).map((b) => [b.id, b] as const),
      ...this.hostTools,
    ]);
    this.implementations = implementations;
    this.specs = new Map(
      this.manifest.list().flatMap((tool) => {
        const implementation = implementations.get(tool.id);
        return implementation
          ? [
              [
                tool.id,
                { id: tool.id, display_name: tool.display_name, summary: tool.summary, input_schema: inputSchemaOf(implementation) },
              ] as const,
            ]
          : [];
      }),
    );
  }

  /** Replaces the tools that join at run time, in the manifest too (refused there like any entry). */
  setExternal(tools: readonly ExternalTool[]): void {
    this.manifest.setExternal(tools.map((t) => t.definition));
    this.external = new Map(tools.map((t) => [t.definition.id, t]));
  }

  /** What calls a tool, host, builtin or external; undefined for a tool nobody implemented. */
  implementation(id: string): ToolImplementation | undefined {
    return this.implementations.get(id) ?? this.external.get(id)?.implementation;
  }

  /** The tool as a model is offered it: id, display name, summary and its input's JSON Schema. */
  spec(id: string): AgentToolSpec | undefined {
    const fixed = this.specs.get(id);
    if (fixed) return fixed;
    const external = this.external.get(id);
    if (!external) return undefined;
    const { display_name, summary } = external.definition;
    return { id, display_name, summary, input_schema: external.input_schema };
  }

  /** The longest one call of the tool may run (the host's or the external tool's timeoutMs, else the default). */
  timeoutOf(id: string): number {
    return this.hostTools.get(id)?.timeoutMs ?? this.external.get(id)?.timeoutMs ?? OPTION_DEFAULTS.toolTimeoutMs;
  }

  legacyName(id: string): string {
    // A Map, not an object: a caller's id such as "constructor" must not find Object.prototype's.
    return this.hostTools.get(id)?.legacy_name ?? BUILTIN_LEGACY_NAMES.get(id) ?? id;
  }
}

/**
 * A tool's input as JSON Schema, for a model to fill in. Tool calling takes named arguments, so the
 * input must be an object (optional or not); anything else is refused when the tool is registered.
 */
function inputSchemaOf(tool: ToolImplementation): Record<string, unknown> {
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch (err) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_TOOL_INPUT',
      `The tool ${JSON.stringify(tool.id)} has an input schema zod cannot describe as JSON Schema (${(err as Error).message}): use plain zod objects.`,
    );
  }
  if (schema.type !== 'object') {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_TOOL_INPUT',
      `The tool ${JSON.stringify(tool.id)} takes ${JSON.stringify(schema.type ?? 'an unknown type')}: a tool's input is an object of named arguments, e.g. z.object({ order_id: z.string() }).`,
    );
  }
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
