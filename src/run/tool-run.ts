// One run's resolution and the single dispatch path: the catalogue offered to the run and the
// check at execution read the same resolved set, and every execution leaves a tool-call record.
import type { Resolution, Run } from '../core/types';
import { ToolForbiddenError } from '../errors';
import type { RunAgent } from '../services/policy-loader';
import type { ToolCallRecord } from '../services/tool-calls';

export type DispatchRun = Extract<Run, { kind: 'sender' | 'scheduled' }>;

export interface ToolRunDeps {
  legacyName(toolId: string): string;
  record(record: ToolCallRecord): Promise<void>;
}

export interface DispatchOptions {
  /** The legacy name to record when it is not the tool's usual one (a pipeline stage). */
  tool_name?: string;
}

export class ToolRun {
  /** The agent this run is for: its id, and its name and prompt for the model. */
  readonly agent: RunAgent;
  readonly run: DispatchRun;
  readonly resolution: Resolution;
  private readonly offered: ReadonlySet<string>;
  private readonly deps: ToolRunDeps;

  constructor(agent: RunAgent, run: DispatchRun, resolution: Resolution, deps: ToolRunDeps) {
    this.agent = agent;
    this.run = run;
    this.resolution = resolution;
    this.offered = new Set(resolution.tools);
    this.deps = deps;
  }

  get agentId(): number {
    return this.agent.id;
  }

  get routingKey(): string | null {
    return this.run.kind === 'sender' ? this.run.routing_key : null;
  }

  /** The tool ids offered to this run, sorted: the catalogue a model would be shown. */
  get tools(): readonly string[] {
    return this.resolution.tools;
  }

  offers(toolId: string): boolean {
    return this.offered.has(toolId);
  }

  /**
   * Checks `toolId` against this run's resolution, runs `execute` when it is offered, and records
   * the call either way. A tool that was not offered is refused, even when named explicitly.
   */
  async dispatch<T>(toolId: string, execute: () => Promise<T> | T, options: DispatchOptions = {}): Promise<T> {
    if (!this.offers(toolId)) throw await this.refuse(toolId, options);
    const started = performance.now();
    let result: T;
    try {
      result = await execute();
    } catch (err) {
      await this.write(toolId, 'failure', started, options, errorText(err));
      throw err;
    }
    await this.write(toolId, 'success', started, options, null);
    return result;
  }

  /** Records a refusal and returns the error to raise: a gate tool's 403 goes through here too. */
  async refuse(toolId: string, options: DispatchOptions = {}): Promise<ToolForbiddenError> {
    await this.write(toolId, 'denied', performance.now(), options, 'not offered to this run');
    return new ToolForbiddenError(toolId);
  }

  /** Records an enhancement step that was skipped because its tool was not offered. */
  async skip(toolId: string, options: DispatchOptions = {}): Promise<void> {
    await this.write(toolId, 'skipped', performance.now(), options, null);
  }

  private async write(toolId: string, status: ToolCallRecord['status'], started: number, options: DispatchOptions, error: string | null): Promise<void> {
    await this.deps.record({
      agent_id: this.agentId,
      tool_id: toolId,
      tool_name: options.tool_name ?? this.deps.legacyName(toolId),
      status,
      run: this.run.kind,
      routing_key: this.routingKey,
      duration_ms: performance.now() - started,
      error,
    });
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
