// One run's resolution and the single dispatch path: the catalogue offered to the run and the
// check at execution read the same resolved set, computed once from the compiled policy, and no tool
// runs without its record. The explained resolution (which attachment admitted, why) is computed
// only when something reads it: the admin's view, or a refusal's record.
import { randomUUID } from 'node:crypto';
import type { CompiledPolicy, RunOffer } from '../core/compiled-policy';
import { ACCESS_RULES_RECORD_ID } from '../core/tool-manifest';
import type { GateDecision, Resolution, Run } from '../core/types';
import { NotDispatchableError, SenderForbiddenError, ToolForbiddenError } from '../errors';
import { parse } from '../http/parse';
import type { RunAgent } from '../services/policy-loader';
import type { ToolCallOutcome, ToolCallRecord } from '../services/tool-calls';
import type { InboundMessage } from '../llm/agent-step';
import type { ToolContext, ToolImplementation } from '../tools/tool-registry';

export type DispatchRun = Extract<Run, { kind: 'sender' | 'scheduled' }>;

type RecordFields = Omit<ToolCallRecord, 'status' | 'duration_ms' | 'error'>;

export interface ToolRunDeps {
  legacyName(toolId: string): string;
  /** What calls a tool (input schema and implementation), host or builtin, by id. */
  implementation(toolId: string): ToolImplementation | undefined;
  /** What a host tool's implementation is given besides its input. */
  toolContext: Pick<ToolContext, 'sequelize'>;
  /** Writes a record complete as it stands (`denied`, `skipped`). */
  record(record: ToolCallRecord): Promise<void>;
  /** Writes the `started` record of an execution and returns its id; a failure here stops the tool. */
  start(record: RecordFields): Promise<number>;
  complete(id: number, outcome: ToolCallOutcome): Promise<void>;
  /** Told when an execution's outcome could not be written over its `started` record. */
  onRecordError(err: unknown, context: { tool_id: string; record_id: number }): void;
  /** Told of every decision at dispatch (metrics); must not throw. */
  onDecision?(decision: DispatchDecision): void;
}

/** What the dispatch path decided for one tool, for metrics: never a sender, a key or any text. */
export interface DispatchDecision {
  outcome: 'granted' | 'refused' | 'skipped';
  /** `offered`; for a refusal or a skip, why the tool was not offered (a GateReason, `access_rules` or `not_carried`). */
  reason: string;
}

export interface DispatchOptions {
  /** The legacy name to record when it is not the tool's usual one (a pipeline stage). */
  tool_name?: string;
}

/** What one execution gave: its output, or the error it threw (a result, not a fault of the service). */
export type ToolOutcome<T> = { status: 'success'; output: T } | { status: 'failure'; error: string; thrown: unknown };

export class ToolRun {
  /** The agent this run is for: its id, and its name and prompt for the model. */
  readonly agent: RunAgent;
  readonly run: DispatchRun;
  /** The agent's access rules' decision on this run's sender; null for a scheduled run. */
  readonly access: GateDecision | null;
  private readonly policy: CompiledPolicy;
  /** The run's tools, resolved once: what is offered and what dispatch checks are this one offer. */
  private readonly offered: RunOffer;
  private readonly deps: ToolRunDeps;
  private sortedTools: readonly string[] | undefined;
  private explained: Resolution | undefined;
  private key: string | undefined;

  constructor(agent: RunAgent, run: DispatchRun, policy: CompiledPolicy, deps: ToolRunDeps) {
    this.agent = agent;
    this.run = run;
    this.policy = policy;
    this.offered = policy.offer(run);
    this.access = this.offered.access;
    this.deps = deps;
  }

  /** The run's resolution explained (which attachments admitted it, why): computed on first read. */
  get resolution(): Resolution {
    return (this.explained ??= this.policy.resolve(this.run));
  }

  get agentId(): number {
    return this.agent.id;
  }

  get routingKey(): string | null {
    return this.run.kind === 'sender' ? this.run.routing_key : null;
  }

  /** The tool ids offered to this run, sorted: the catalogue a model would be shown. */
  get tools(): readonly string[] {
    return (this.sortedTools ??= Object.freeze(this.offered.list().sort()));
  }

  offers(toolId: string): boolean {
    return this.offered.has(toolId);
  }

  /**
   * Records the refusal of this run's sender by the agent's access rules (one `denied` record,
   * naming the rule or the default that refused) and returns the 403 to raise: nothing else runs.
   */
  async refuseSender(): Promise<SenderForbiddenError> {
    const access = this.access;
    const why = access === null ? 'access rules' : `${access.reason}${access.matched_rule ? ` (${access.matched_rule.kind} ${access.matched_rule.pattern})` : ''}`;
    await this.deps.record({ ...this.fields(ACCESS_RULES_RECORD_ID, {}), status: 'denied', duration_ms: 0, error: `refused by the agent's access rules: ${why}` });
    this.decided('refused', 'access_rules');
    return new SenderForbiddenError();
  }

  /**
   * The one dispatch path. Checks `toolId` against this run's resolution (a tool that was not
   * offered is refused and recorded, even when named explicitly), writes the `started` record, runs
   * `execute`, and completes the record. When the record cannot be written the tool does not run:
   * the database's error is thrown. A tool that throws is a `failure` outcome, not an exception.
   */
  async execute<T>(toolId: string, execute: () => Promise<T> | T, options: DispatchOptions = {}): Promise<ToolOutcome<T>> {
    if (!this.offers(toolId)) throw await this.refuse(toolId, options);
    const id = await this.deps.start(this.fields(toolId, options));
    this.decided('granted', 'offered');
    const started = performance.now();
    let outcome: ToolOutcome<T>;
    try {
      outcome = { status: 'success', output: await execute() };
    } catch (err) {
      outcome = { status: 'failure', error: errorText(err), thrown: err };
    }
    const error = outcome.status === 'failure' ? outcome.error : null;
    try {
      await this.deps.complete(id, { status: outcome.status, duration_ms: performance.now() - started, error });
    } catch (err) {
      // The tool has run: its outcome is the caller's, whatever became of the record, which stays
      // `started` and so says the end was never written.
      this.deps.onRecordError(err, { tool_id: toolId, record_id: id });
    }
    return outcome;
  }

  /**
   * Calls a tool by id, as a model harness or a host route would: refused and recorded when not
   * offered; its input checked against the tool's schema (a 422 naming the field, nothing runs);
   * then the one dispatch path. `message` is the message the run handles, for tools that read it.
   */
  async callTool(toolId: string, input: unknown, options: { message?: InboundMessage } = {}): Promise<ToolOutcome<unknown>> {
    // Refused first when not offered, whatever the tool is: the check never depends on it.
    if (!this.offers(toolId)) throw await this.refuse(toolId);
    const tool = this.deps.implementation(toolId);
    if (!tool) throw new NotDispatchableError(toolId);
    const checked: unknown = parse(tool.input, input, ['body', 'input']);
    const context: ToolContext = {
      ...this.deps.toolContext,
      agent_id: this.agentId,
      agent: this.agent,
      run: this.run.kind,
      routing_key: this.routingKey,
      ...(options.message ? { message: options.message } : {}),
      // Made on the first call that needs it: most runs never call a tool by name.
      run_key: (this.key ??= randomUUID()),
      callTool: async (id, nestedInput) => {
        const outcome = await this.callTool(id, nestedInput, options);
        if (outcome.status === 'failure') throw outcome.thrown;
        return outcome.output;
      },
    };
    return this.execute(toolId, () => tool.execute(checked, context));
  }

  /** As execute(), for code that runs a tool as a step of its own: a tool that throws, throws. */
  async dispatch<T>(toolId: string, execute: () => Promise<T> | T, options: DispatchOptions = {}): Promise<T> {
    const outcome = await this.execute(toolId, execute, options);
    if (outcome.status === 'failure') throw outcome.thrown;
    return outcome.output;
  }

  /** Records a refusal and returns the error to raise: a gate tool's 403 goes through here too. */
  async refuse(toolId: string, options: DispatchOptions = {}): Promise<ToolForbiddenError> {
    await this.deps.record({ ...this.fields(toolId, options), status: 'denied', duration_ms: 0, error: 'not offered to this run' });
    this.decided('refused', this.whyNotOffered(toolId));
    return new ToolForbiddenError(toolId);
  }

  /** Records an enhancement step that was skipped because its tool was not offered. */
  async skip(toolId: string, options: DispatchOptions = {}): Promise<void> {
    await this.deps.record({ ...this.fields(toolId, options), status: 'skipped', duration_ms: 0, error: null });
    this.decided('skipped', this.whyNotOffered(toolId));
  }

  /** Why a tool is not offered, from the explained resolution: computed for refusals and skips only. */
  private whyNotOffered(toolId: string): string {
    if (this.offered.has(toolId)) return 'offered';
    const resolution = this.resolution;
    if (resolution.access?.admitted === false) return 'access_rules';
    return resolution.attachments.find((a) => !a.admitted && a.tools.includes(toolId))?.reason ?? 'not_carried';
  }

  private decided(outcome: DispatchDecision['outcome'], reason: string): void {
    this.deps.onDecision?.({ outcome, reason });
  }

  private fields(toolId: string, options: DispatchOptions): RecordFields {
    return {
      agent_id: this.agentId,
      tool_id: toolId,
      tool_name: options.tool_name ?? this.deps.legacyName(toolId),
      run: this.run.kind,
      routing_key: this.routingKey,
    };
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
