// Starts runs: loads one agent's policy (one query), compiles it, resolves the run once, and hands
// back the ToolRun through which every execution of that run must pass.
import type { Sequelize } from 'sequelize';
import { compilePolicy, type CompiledPolicy } from '../core/compiled-policy';
import type { Resolution, Run } from '../core/types';
import { orUnavailable } from '../db/unavailable';
import { NotFoundError } from '../errors';
import { loadAgentPolicy, type RunAgent } from '../services/policy-loader';
import { completeToolCall, recordToolCall, startToolCall } from '../services/tool-calls';
import type { ToolRegistry } from '../tools/tool-registry';
import { ToolRun, type DispatchRun, type ToolRunDeps } from './tool-run';

export class RunService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: ToolRegistry,
    private readonly onRecordError: ToolRunDeps['onRecordError'] = () => undefined,
  ) {}

  async policy(agentId: number): Promise<{ agent: RunAgent; compiled: CompiledPolicy }> {
    const loaded = await orUnavailable(loadAgentPolicy(this.sequelize, agentId));
    if (!loaded) throw new NotFoundError(`Agent ${agentId}`);
    return { agent: loaded.agent, compiled: compilePolicy(loaded.policy, this.registry.manifest.ids) };
  }

  async start(agentId: number, run: DispatchRun): Promise<ToolRun> {
    const { agent, compiled } = await this.policy(agentId);
    return new ToolRun(agent, run, compiled.resolve(run), {
      legacyName: (id) => this.registry.legacyName(id),
      implementation: (id) => this.registry.implementation(id),
      toolContext: { sequelize: this.sequelize },
      record: (record) => orUnavailable(recordToolCall(this.sequelize, record)),
      start: (record) => orUnavailable(startToolCall(this.sequelize, record)),
      complete: (id, outcome) => completeToolCall(this.sequelize, id, outcome),
      onRecordError: this.onRecordError,
    });
  }

  /** The admin's view: which attachments admitted the run, why, and which members are stale. */
  async explain(agentId: number, run: Run): Promise<Resolution> {
    return (await this.policy(agentId)).compiled.resolve(run);
  }
}
