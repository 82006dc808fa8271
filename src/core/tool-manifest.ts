// The one catalogue of tools: the four builtins and whatever a host application registers.
// Toolkits store only ids, so a bad or duplicate entry here is refused before anything is served.
import { ToolgateConfigError } from '../errors';
import { toolDefinitionSchema, type ToolDefinition } from './types';

/**
 * The builtin tools, said once: the manifest's definitions, the name their records carry and the
 * ids their implementations (tools/builtin-tools.ts) are keyed by all come from this table. The
 * legacy API logged some tools under their pipeline stage's name (seed 002, Observability); records
 * keep that name beside the canonical id so old dashboards keep matching.
 */
const BUILTINS = {
  email_analyzer: {
    display_name: 'Email analyzer',
    summary: 'Analyzes an email: summary, category, priority, sentiment, action items and a suggested reply.',
    kind: 'gate',
    legacy_name: 'email_analyzer',
  },
  document_search: {
    display_name: 'Document search',
    summary: "Searches the agent's documents and answers questions from them (RAG).",
    kind: 'gate',
    legacy_name: 'document_search',
  },
  task_creator: {
    display_name: 'Task creator',
    summary: "Creates tasks from an email's action items; without it no task is created.",
    kind: 'enhancement',
    legacy_name: 'task_creator',
  },
  reply_generator: {
    display_name: 'Reply generator',
    summary: "Drafts the reply with the dedicated reply agent; without it the analysis's suggested reply is used.",
    kind: 'enhancement',
    legacy_name: 'multi_agent_reply_agent',
  },
} as const satisfies Record<string, Omit<ToolDefinition, 'id' | 'builtin'> & { legacy_name: string }>;

export type BuiltinToolId = keyof typeof BUILTINS;

// Object.entries loses the key type; the keys are exactly BuiltinToolId by construction.
const builtinEntries = Object.entries(BUILTINS) as [BuiltinToolId, (typeof BUILTINS)[BuiltinToolId]][];

export const BUILTIN_TOOLS: readonly ToolDefinition[] = Object.freeze(
  builtinEntries.map(([id, { display_name, summary, kind }]) => Object.freeze({ id, display_name, summary, kind, builtin: true })),
);

/** The name a builtin's tool-call records carry (the `tool_name` column). */
export const BUILTIN_LEGACY_NAMES: ReadonlyMap<string, string> = new Map(builtinEntries.map(([id, { legacy_name }]) => [id, legacy_name]));

export class ToolManifest {
  readonly #fixed: readonly ToolDefinition[];
  #tools: readonly ToolDefinition[] = [];
  #byId: ReadonlyMap<string, ToolDefinition> = new Map();
  #ids: ReadonlySet<string> = new Set();

  constructor(tools: readonly ToolDefinition[]) {
    this.#fixed = indexed(tools, new Map());
    this.#set([]);
  }

  /** Every id, as it stands now: the tools registered in code never change, MCP servers' may. */
  get ids(): ReadonlySet<string> {
    return this.#ids;
  }

  /**
   * Replaces the tools that join at run time: the MCP servers' pinned tools (src/mcp/), listed
   * after the tools registered in code, never in their place.
   */
  setExternal(tools: readonly ToolDefinition[]): void {
    this.#set(indexed(tools, new Map(this.#fixed.map((t, i) => [t.id, i]))));
  }

  #set(external: readonly ToolDefinition[]): void {
    // Builtins lead so that a host's registration order can never reshuffle the dashboard's checklist.
    const all = [...this.#fixed.filter((t) => t.builtin), ...this.#fixed.filter((t) => !t.builtin), ...external];
    this.#tools = Object.freeze(all);
    this.#byId = new Map(all.map((t) => [t.id, t]));
    this.#ids = new Set(all.map((t) => t.id));
  }

  list(): ToolDefinition[] {
    return [...this.#tools];
  }

  get(id: string): ToolDefinition | undefined {
    return this.#byId.get(id);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  builtinIds(): string[] {
    return this.#tools.filter((t) => t.builtin).map((t) => t.id);
  }
}

/** The entries validated, each id once (`positions` holds the ids already taken, by entry number). */
function indexed(tools: readonly ToolDefinition[], positions: Map<string, number>): readonly ToolDefinition[] {
  const valid: ToolDefinition[] = [];
  tools.forEach((entry, index) => {
    const tool = validTool(entry, index);
    const first = positions.get(tool.id);
    if (first !== undefined) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_DUPLICATE_TOOL',
        `The tool id "${tool.id}" is registered twice (entries #${first} and #${index}): ids are what toolkits store, so each must be unique. Rename one tool or register it once.`,
      );
    }
    positions.set(tool.id, index);
    valid.push(tool);
  });
  return valid;
}

/**
 * The id a refusal by the agent's access rules is recorded under (SEMANTICS §9): not a tool, so no
 * tool may be registered with it, and a record under it always means "the sender was refused".
 */
export const ACCESS_RULES_RECORD_ID = 'agent_access_rules';

/** Throws when a host's code names that id as the tool of a step it runs or skips: a mistake in the code, not a request's. */
export function refuseReservedToolId(toolId: string): void {
  if (toolId !== ACCESS_RULES_RECORD_ID) return;
  throw new ToolgateConfigError(
    'ERR_TOOLGATE_RESERVED_TOOL_ID',
    `A step names the tool "${toolId}", the id that records refusals by an agent's access rules, which no tool may use: name the tool the step runs or skips.`,
  );
}

/** The manifest a service runs with: the builtins, then the host application's own tools. */
export function createManifest(hostTools: readonly ToolDefinition[] = []): ToolManifest {
  const builtinIds = new Set(BUILTIN_TOOLS.map((t) => t.id));
  hostTools.forEach((tool, index) => {
    if (typeof tool !== 'object' || tool === null) return;
    if (tool.id === ACCESS_RULES_RECORD_ID) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_RESERVED_TOOL_ID',
        `The host tool "${tool.id}" (entry #${index}) uses the id that records refusals by an agent's access rules. Give the tool another id.`,
      );
    }
    if (builtinIds.has(tool.id)) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_DUPLICATE_TOOL',
        `The host tool "${tool.id}" (entry #${index}) reuses the id of a builtin tool: toolkits would not tell them apart. Give the host tool another id.`,
      );
    }
    // `<server>__<tool>` is an MCP server's namespace: a tool of the code's own never takes one.
    if (typeof tool.id === 'string' && tool.id.includes('__')) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_TOOL_DEFINITION',
        `The host tool "${tool.id}" (entry #${index}) has a double underscore, which names an MCP server's tool (<server>__<tool>). Give it a snake_case id with single underscores.`,
      );
    }
    // A host tool flagged builtin would be seeded into every new agent's Default Tools.
    if (tool.builtin === true) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_HOST_TOOL_BUILTIN',
        `The host tool "${String(tool.id)}" (entry #${index}) says builtin: true: only the project's own tools are builtin. Set builtin: false.`,
      );
    }
  });
  return new ToolManifest([...BUILTIN_TOOLS, ...hostTools]);
}

function validTool(entry: unknown, index: number): ToolDefinition {
  const parsed = toolDefinitionSchema.safeParse(entry);
  if (parsed.success) return Object.freeze(parsed.data);
  const id = typeof entry === 'object' && entry !== null && 'id' in entry ? JSON.stringify(entry.id) : 'with no id';
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'entry'}: ${i.message}`).join('; ');
  throw new ToolgateConfigError(
    'ERR_TOOLGATE_TOOL_DEFINITION',
    `The tool definition #${index} (${id}) is invalid: ${problems}. Fix the entry: each tool needs a snake_case id, a display_name, a summary, a kind of "gate" or "enhancement" and a builtin flag.`,
  );
}
