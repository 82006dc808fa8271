// The registry a toolgate instance runs with: the manifest (pure definitions, in the core) plus
// what a host registered beside each of its tools: an input schema, an implementation, and the
// legacy name its tool-call records carry.
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { createManifest, type ToolManifest } from '../core/tool-manifest';
import type { ToolDefinition, ToolKind } from '../core/types';
import { ToolgateConfigError } from '../errors';

export interface ToolContext {
  agent_id: number;
  run: 'sender' | 'scheduled';
  routing_key: string | null;
  sequelize: Sequelize;
}

export interface HostTool<S extends z.ZodType = z.ZodType, R = unknown> {
  id: string;
  display_name: string;
  summary: string;
  /** Host tools are dispatched by name, so a missing grant refuses them: `gate` unless said. */
  kind?: ToolKind;
  /** The name tool-call records carry; the id unless the host's history used another. */
  legacy_name?: string;
  input: S;
  execute: (input: z.infer<S>, context: ToolContext) => R | Promise<R>;
}

/** What the tool-call records' `tool_name` column holds. */
const MAX_LEGACY_NAME = 100;
const legacyNameSchema = z.string().min(1).max(MAX_LEGACY_NAME).regex(/^[^\p{Cc}]+$/u);

/** Identity, for inference: `defineTool({ input: z.object(...), execute: (input) => ... })`. */
export function defineTool<S extends z.ZodType, R>(tool: HostTool<S, R>): HostTool<S, R> {
  return tool;
}

/**
 * The legacy API logged some tools under their pipeline stage's name (seed 002, Observability);
 * records keep that name beside the canonical id so old dashboards keep matching.
 */
export const BUILTIN_LEGACY_NAMES: ReadonlyMap<string, string> = new Map([
  ['email_analyzer', 'email_analyzer'],
  ['task_creator', 'task_creator'],
  ['document_search', 'document_search'],
  ['reply_generator', 'multi_agent_reply_agent'],
]);

export class ToolRegistry {
  readonly manifest: ToolManifest;
  private readonly hostTools: ReadonlyMap<string, HostTool>;

  constructor(hostTools: readonly HostTool[] = []) {
    for (const tool of hostTools) {
      if (typeof tool.execute !== 'function') {
        throw new ToolgateConfigError('ERR_TOOLGATE_TOOL_EXECUTE', `The host tool ${JSON.stringify(tool.id)} has no execute function: give it one.`);
      }
      if (tool.legacy_name !== undefined && !legacyNameSchema.safeParse(tool.legacy_name).success) {
        throw new ToolgateConfigError(
          'ERR_TOOLGATE_LEGACY_NAME',
          `The host tool ${JSON.stringify(tool.id)} has the legacy_name ${JSON.stringify(tool.legacy_name)}: a legacy name is 1 to ${MAX_LEGACY_NAME} characters with no control characters, as tool-call records store it.`,
        );
      }
    }
    const definitions: ToolDefinition[] = hostTools.map((t) => ({
      id: t.id,
      display_name: t.display_name,
      summary: t.summary,
      kind: t.kind ?? 'gate',
      builtin: false,
    }));
    this.manifest = createManifest(definitions);
    this.hostTools = new Map(hostTools.map((t) => [t.id, t]));
  }

  hostTool(id: string): HostTool | undefined {
    return this.hostTools.get(id);
  }

  legacyName(id: string): string {
    // A Map, not an object: a caller's id such as "constructor" must not find Object.prototype's.
    return this.hostTools.get(id)?.legacy_name ?? BUILTIN_LEGACY_NAMES.get(id) ?? id;
  }
}
