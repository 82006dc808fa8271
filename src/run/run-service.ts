// Starts runs: loads one agent's policy (one query), compiles it, resolves the run once, and hands
// back the ToolRun through which every execution of that run must pass.
import type { Sequelize } from 'sequelize';
import { compilePolicy, type CompiledPolicy } from '../core/compiled-policy';
import type { Resolution, Run } from '../core/types';
import { NotFoundError } from '../errors';
import { loadAgentPolicy } from '../services/policy-loader';
import { recordToolCall } from '../services/tool-calls';
import type { ToolRegistry } from '../tools/tool-registry';
import { ToolRun, type DispatchRun } from './tool-run';

export class RunService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: ToolRegistry,
  ) {}

  async policy(agentId: number): Promise<CompiledPolicy> {
    const data = await loadAgentPolicy(this.sequelize, agentId);
    if (!data) throw new NotFoundError(`Agent ${agentId}`);
    return compilePolicy(data, this.registry.manifest.ids);
  }

  async start(agentId: number, run: DispatchRun): Promise<ToolRun> {
    const resolution = (await this.policy(agentId)).resolve(run);
    return new ToolRun(agentId, run, resolution, {
      legacyName: (id) => this.registry.legacyName(id),
      record: (record) => recordToolCall(this.sequelize, record),
    });
  }

  /** The admin's view: which attachments admitted the run, why, and which members are stale. */
  async explain(agentId: number, run: Run): Promise<Resolution> {
    return (await this.policy(agentId)).resolve(run);
  }
}
