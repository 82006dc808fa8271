// Attachments and their gate rules: granting a toolkit to an agent on its own terms, changing
// those terms, revoking. Patterns arrive normalized (the route parses them with the core).
import { ForeignKeyConstraintError, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { Agent } from '../../models/agent';
import { AgentToolkit } from '../../models/agent-toolkit';
import { AgentToolkitRule } from '../../models/agent-toolkit-rule';
import { Toolkit } from '../../models/toolkit';
import type { ToolManifest } from '../core/tool-manifest';
import type { RuleKind } from '../core/types';
import { ConflictError, NotFoundError } from '../errors';
import { toolkitView, type ToolkitView } from './toolkits';

export interface RuleInput {
  kind: RuleKind;
  pattern: string;
}

export interface RuleView extends RuleInput {
  id: number;
}

export interface AttachmentView {
  id: number;
  agent_id: number;
  toolkit: ToolkitView;
  allow_proactive: boolean;
  rules: RuleView[];
}

export interface AttachInput {
  toolkit_id: number;
  allow_proactive?: boolean;
  rules?: RuleInput[];
}

export class AttachmentService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly manifest: ToolManifest,
  ) {}

  async list(agentId: number): Promise<AttachmentView[]> {
    await this.agentExists(agentId);
    const rows = await AgentToolkit.findAll({
      where: { agent_id: agentId },
      include: [
        { model: Toolkit, as: 'toolkit' },
        { model: AgentToolkitRule, as: 'rules' },
      ],
      order: [['id', 'ASC'], [{ model: AgentToolkitRule, as: 'rules' }, 'id', 'ASC']],
    });
    return rows.map((row) => this.view(row));
  }

  async get(agentId: number, attachmentId: number, transaction?: Transaction): Promise<AttachmentView> {
    const row = await AgentToolkit.findOne({
      where: { id: attachmentId, agent_id: agentId },
      include: [
        { model: Toolkit, as: 'toolkit' },
        { model: AgentToolkitRule, as: 'rules' },
      ],
      order: [[{ model: AgentToolkitRule, as: 'rules' }, 'id', 'ASC']],
      transaction,
    });
    if (!row) throw new NotFoundError(`Attachment ${attachmentId} of agent ${agentId}`);
    return this.view(row);
  }

  async attach(agentId: number, input: AttachInput): Promise<AttachmentView> {
    return this.sequelize.transaction(async (transaction) => {
      await this.agentExists(agentId, transaction);
      if (!(await Toolkit.findByPk(input.toolkit_id, { attributes: ['id'], transaction }))) {
        throw new NotFoundError(`Toolkit ${input.toolkit_id}`);
      }
      let attachment: AgentToolkit;
      try {
        attachment = await AgentToolkit.create(
          { agent_id: agentId, toolkit_id: input.toolkit_id, allow_proactive: input.allow_proactive ?? false, origin: 'operator' },
          { transaction },
        );
      } catch (err) {
        if (err instanceof UniqueConstraintError) {
          throw new ConflictError(`Toolkit ${input.toolkit_id} is already attached to agent ${agentId}: change that attachment (PATCH) instead.`);
        }
        throw gone(err);
      }
      await this.writeRules(attachment.id, input.rules ?? [], transaction);
      return this.get(agentId, attachment.id, transaction);
    });
  }

  /** `rules`, when given, replaces the whole list in the same transaction as the other terms. */
  async update(agentId: number, attachmentId: number, patch: { allow_proactive?: boolean; rules?: RuleInput[] }): Promise<AttachmentView> {
    return this.sequelize.transaction(async (transaction) => {
      const attachment = await this.findAttachment(agentId, attachmentId, transaction);
      if (patch.allow_proactive !== undefined) {
        attachment.allow_proactive = patch.allow_proactive;
        attachment.changed('updated_at', true);
        await attachment.save({ transaction });
      }
      if (patch.rules !== undefined) {
        await AgentToolkitRule.destroy({ where: { agent_toolkit_id: attachment.id }, transaction });
        await this.writeRules(attachment.id, patch.rules, transaction);
      }
      return this.get(agentId, attachmentId, transaction);
    });
  }

  async detach(agentId: number, attachmentId: number): Promise<void> {
    const deleted = await AgentToolkit.destroy({ where: { id: attachmentId, agent_id: agentId } });
    if (deleted === 0) throw new NotFoundError(`Attachment ${attachmentId} of agent ${agentId}`);
  }

  async addRule(agentId: number, attachmentId: number, rule: RuleInput): Promise<RuleView> {
    return this.sequelize.transaction(async (transaction) => {
      const attachment = await this.findAttachment(agentId, attachmentId, transaction);
      try {
        const created = await AgentToolkitRule.create({ agent_toolkit_id: attachment.id, kind: rule.kind, pattern: rule.pattern }, { transaction });
        return { id: created.id, kind: created.kind, pattern: created.pattern };
      } catch (err) {
        if (err instanceof UniqueConstraintError) {
          throw new ConflictError(`This attachment already has the ${rule.kind} rule ${JSON.stringify(rule.pattern)}.`);
        }
        throw gone(err);
      }
    });
  }

  async deleteRule(agentId: number, attachmentId: number, ruleId: number): Promise<void> {
    return this.sequelize.transaction(async (transaction) => {
      const attachment = await this.findAttachment(agentId, attachmentId, transaction);
      const deleted = await AgentToolkitRule.destroy({ where: { id: ruleId, agent_toolkit_id: attachment.id }, transaction });
      if (deleted === 0) throw new NotFoundError(`Rule ${ruleId} of attachment ${attachmentId}`);
    });
  }

  private async writeRules(attachmentId: number, rules: RuleInput[], transaction: Transaction): Promise<void> {
    // The same rule twice is one rule: patterns are compared after normalization.
    const unique = new Map(rules.map((r) => [`${r.kind} ${r.pattern}`, r]));
    await AgentToolkitRule.bulkCreate(
      [...unique.values()].map((r) => ({ agent_toolkit_id: attachmentId, kind: r.kind, pattern: r.pattern })),
      { transaction },
    );
  }

  /** Locks the attachment row so concurrent edits of one gate apply one after the other. */
  private async findAttachment(agentId: number, attachmentId: number, transaction: Transaction): Promise<AgentToolkit> {
    const attachment = await AgentToolkit.findOne({ where: { id: attachmentId, agent_id: agentId }, transaction, lock: transaction.LOCK.UPDATE });
    if (!attachment) throw new NotFoundError(`Attachment ${attachmentId} of agent ${agentId}`);
    return attachment;
  }

  private async agentExists(agentId: number, transaction?: Transaction): Promise<void> {
    if (!(await Agent.findByPk(agentId, { attributes: ['id'], transaction }))) throw new NotFoundError(`Agent ${agentId}`);
  }

  private view(row: AgentToolkit): AttachmentView {
    if (!row.toolkit) throw new Error('attachment loaded without its toolkit');
    return {
      id: row.id,
      agent_id: row.agent_id,
      toolkit: toolkitView(row.toolkit, this.manifest),
      allow_proactive: row.allow_proactive,
      rules: (row.rules ?? []).map((r) => ({ id: r.id, kind: r.kind, pattern: r.pattern })),
    };
  }
}

/** A row deleted by a concurrent request between our read and our write. */
function gone(err: unknown): unknown {
  if (err instanceof ForeignKeyConstraintError) return new NotFoundError('The agent or toolkit');
  return err;
}
