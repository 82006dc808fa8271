// An agent's access rules (SEMANTICS §9): listed, added and removed by operators. Patterns are
// normalized as the gate rules' are, and a rule that already exists is a conflict.
import { ForeignKeyConstraintError, UniqueConstraintError } from 'sequelize';
import type { Models } from '../../models';
import { ConflictError, NotFoundError } from '../errors';
import { checked, type Parsed } from '../http/parse';
import { ruleSchema, type RuleInput } from './attachment-inputs';
import type { RuleView } from './attachments';

export class AccessRuleService {
  constructor(private readonly models: Models) {}

  /** In the order they were added, which is the order a matched rule is reported in. */
  async list(agentId: number): Promise<RuleView[]> {
    await this.agentExists(agentId);
    const rows = await this.models.AgentAccessRule.findAll({ where: { agent_id: agentId }, order: [['id', 'ASC']] });
    return rows.map((r) => ({ id: r.id, kind: r.kind, pattern: r.pattern }));
  }

  async add(agentId: number, given: RuleInput | Parsed<typeof ruleSchema>): Promise<RuleView> {
    const rule = checked(ruleSchema, given);
    await this.agentExists(agentId);
    try {
      const created = await this.models.AgentAccessRule.create({ agent_id: agentId, kind: rule.kind, pattern: rule.pattern });
      return { id: created.id, kind: created.kind, pattern: created.pattern };
    } catch (err) {
      if (err instanceof UniqueConstraintError)
        throw new ConflictError(`Agent ${agentId} already has the ${rule.kind} access rule ${JSON.stringify(rule.pattern)}.`);
      if (err instanceof ForeignKeyConstraintError) throw new NotFoundError(`Agent ${agentId}`);
      throw err;
    }
  }

  async delete(agentId: number, ruleId: number): Promise<void> {
    await this.agentExists(agentId);
    const deleted = await this.models.AgentAccessRule.destroy({ where: { id: ruleId, agent_id: agentId } });
    if (deleted === 0) throw new NotFoundError(`Access rule ${ruleId} of agent ${agentId}`);
  }

  private async agentExists(agentId: number): Promise<void> {
    if (!(await this.models.Agent.findByPk(agentId, { attributes: ['id'] }))) throw new NotFoundError(`Agent ${agentId}`);
  }
}
