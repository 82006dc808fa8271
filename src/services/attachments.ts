// Attachments and their gate rules: granting a toolkit to an agent on its own terms, changing
// those terms, revoking. Patterns arrive normalized (the route parses them with the core).
import { ForeignKeyConstraintError, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import type { AgentToolkit, Models } from '../../models';
import type { StoredCandidate } from '../../models/agent-toolkit';
import type { ToolManifest } from '../core/tool-manifest';
import { windowText } from '../core/cap-window';
import { closestToolId } from '../core/closest-tool';
import { approvalTermsSchema, capPerSchema, ruleKindSchema, type CapRule, type RuleKind } from '../core/types';
import { ConflictError, NoCandidateError, NotFoundError, ValidationError } from '../errors';
import { checked, type Parsed } from '../http/parse';
import {
  attachInputSchema,
  attachmentPatchSchema,
  ruleSchema,
  type AttachInput,
  type AttachmentPatch,
  type RuleInput,
} from './attachment-inputs';
import { dropShadowCaps, promoteShadowCaps } from './shadow-caps';
import { shadowSummary, shadowSummarySchema } from './shadow-summary';
import { toolkitView, toolkitViewSchema } from './toolkits';

/** A rule as stored: its id, and its pattern normalized. */
export const ruleViewSchema = z.object({ id: z.number().int(), kind: ruleKindSchema, pattern: z.string().describe('normalized') });
export type RuleView = z.output<typeof ruleViewSchema>;

/** How often its members may run (SEMANTICS §13), the window as written back (`1d`). */
const capViewSchema = z.object({
  tool_id: z.string().nullable().describe('the member it caps; null: all the members together'),
  per: capPerSchema,
  limit: z.number().int(),
  window: z.string().describe('<n><s|m|h|d>, in the largest unit that holds it'),
});
export type CapView = z.output<typeof capViewSchema>;

/** Candidate terms as given: the fields named replace the live ones when promoted, the others stay. */
const candidateViewSchema = z
  .object({
    rules: z.array(z.object({ kind: ruleKindSchema, pattern: z.string().describe('normalized') })).optional(),
    caps: z.array(capViewSchema).optional(),
    approval: approvalTermsSchema.optional(),
    allow_proactive: z.boolean().optional(),
    since: z.string().describe('when they were set: the shadow counts from then'),
  })
  .describe(
    'terms tried beside the live ones (SEMANTICS §15): the fields given replace the live ones when promoted; nothing is granted by them',
  );
export type CandidateView = z.output<typeof candidateViewSchema>;

/** An attachment as the routes and a host's code read it. */
export const attachmentViewSchema = z.object({
  id: z.number().int(),
  agent_id: z.number().int(),
  toolkit: toolkitViewSchema,
  allow_proactive: z.boolean(),
  rules: z.array(ruleViewSchema),
  approval: approvalTermsSchema,
  caps: z.array(capViewSchema).describe('how often its members may run (SEMANTICS §13)'),
  candidate: candidateViewSchema.optional().describe('absent when the attachment carries no candidate'),
});
export type AttachmentView = z.output<typeof attachmentViewSchema>;

/** An attachment with its candidate, and what the candidate would have decided so far. */
export const candidateShadowSchema = attachmentViewSchema.extend({ candidate: candidateViewSchema, shadow: shadowSummarySchema });
export type CandidateShadowView = z.output<typeof candidateShadowSchema>;

export function capView(cap: CapRule): CapView {
  return { tool_id: cap.tool_id, per: cap.per, limit: cap.limit, window: windowText(cap.window_s) };
}

export class AttachmentService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly manifest: ToolManifest,
    private readonly models: Models,
  ) {}

  async list(agentId: number): Promise<AttachmentView[]> {
    await this.agentExists(agentId);
    const rows = await this.models.AgentToolkit.findAll({
      where: { agent_id: agentId },
      include: [
        { model: this.models.Toolkit, as: 'toolkit' },
        { model: this.models.AgentToolkitRule, as: 'rules' },
      ],
      order: [
        ['id', 'ASC'],
        [{ model: this.models.AgentToolkitRule, as: 'rules' }, 'id', 'ASC'],
      ],
    });
    return rows.map((row) => this.view(row));
  }

  async get(agentId: number, attachmentId: number, transaction?: Transaction): Promise<AttachmentView> {
    const row = await this.models.AgentToolkit.findOne({
      where: { id: attachmentId, agent_id: agentId },
      include: [
        { model: this.models.Toolkit, as: 'toolkit' },
        { model: this.models.AgentToolkitRule, as: 'rules' },
      ],
      order: [[{ model: this.models.AgentToolkitRule, as: 'rules' }, 'id', 'ASC']],
      transaction,
    });
    if (!row) throw new NotFoundError(`Attachment ${attachmentId} of agent ${agentId}`);
    return this.view(row);
  }

  /** Rules' patterns are normalized as the API does (`Mara@TheScoop.com` → `mara@thescoop.com`). */
  async attach(agentId: number, given: AttachInput | Parsed<typeof attachInputSchema>): Promise<AttachmentView> {
    const input = checked(attachInputSchema, given);
    return this.sequelize.transaction(async (transaction) => {
      await this.agentExists(agentId, transaction);
      if (!(await this.models.Toolkit.findByPk(input.toolkit_id, { attributes: ['id'], transaction }))) {
        throw new NotFoundError(`Toolkit ${input.toolkit_id}`);
      }
      let attachment: AgentToolkit;
      try {
        attachment = await this.models.AgentToolkit.create(
          {
            agent_id: agentId,
            toolkit_id: input.toolkit_id,
            allow_proactive: input.allow_proactive ?? false,
            origin: 'operator',
            approvers: input.approval?.approvers ?? null,
            caps: this.checkedCaps(input.caps ?? []),
          },
          { transaction },
        );
      } catch (err) {
        if (err instanceof UniqueConstraintError) {
          throw new ConflictError(
            `Toolkit ${input.toolkit_id} is already attached to agent ${agentId}: change that attachment (PATCH) instead.`,
          );
        }
        throw gone(err);
      }
      await this.writeRules(attachment.id, input.rules ?? [], transaction);
      return this.get(agentId, attachment.id, transaction);
    });
  }

  /**
   * `rules`, when given, replaces the whole list in the same transaction as the other terms. A
   * changed approver list voids the attachment's pending requests (the database does it, in the
   * same transaction).
   */
  async update(
    agentId: number,
    attachmentId: number,
    given: AttachmentPatch | Parsed<typeof attachmentPatchSchema>,
  ): Promise<AttachmentView> {
    const patch = checked(attachmentPatchSchema, given);
    return this.sequelize.transaction(async (transaction) => {
      const attachment = await this.findAttachment(agentId, attachmentId, transaction);
      await this.applyTerms(attachment, patch, transaction);
      return this.get(agentId, attachmentId, transaction);
    });
  }

  /**
   * Sets the attachment's candidate terms (SEMANTICS §15), checked as PATCH checks its terms, in
   * place of any it carried: its shadow counts from now. Nothing is granted by them; the agent's
   * policy version is raised, so every instance resolves them from its next run.
   */
  async setCandidate(
    agentId: number,
    attachmentId: number,
    given: AttachmentPatch | Parsed<typeof attachmentPatchSchema>,
  ): Promise<AttachmentView> {
    const patch = checked(attachmentPatchSchema, given);
    const stored: StoredCandidate = {
      ...(patch.rules !== undefined ? { rules: [...new Map(patch.rules.map((r) => [`${r.kind} ${r.pattern}`, r])).values()] } : {}),
      ...(patch.caps !== undefined ? { caps: this.checkedCaps(patch.caps) } : {}),
      ...(patch.approval !== undefined ? { approvers: patch.approval?.approvers ?? null } : {}),
      ...(patch.allow_proactive !== undefined ? { allow_proactive: patch.allow_proactive } : {}),
    };
    return this.sequelize.transaction(async (transaction) => {
      await this.findAttachment(agentId, attachmentId, transaction);
      await this.sequelize.query('UPDATE agent_toolkits SET candidate = $1::jsonb, candidate_at = now() WHERE id = $2', {
        bind: [JSON.stringify(stored), attachmentId],
        transaction,
      });
      // The shadow counts the new terms' caps afresh, from now.
      await dropShadowCaps(this.sequelize, attachmentId, transaction);
      return this.get(agentId, attachmentId, transaction);
    });
  }

  /** The attachment with its candidate and the shadow so far: a 404 `no_candidate` when it carries none. */
  async candidate(agentId: number, attachmentId: number): Promise<CandidateShadowView> {
    const view = await this.get(agentId, attachmentId);
    if (view.candidate === undefined) throw new NoCandidateError(attachmentId);
    return { ...view, candidate: view.candidate, shadow: await shadowSummary(this.sequelize, agentId, attachmentId, view.candidate.since) };
  }

  /**
   * Makes the candidate the live terms, in one transaction, as PATCH would with the candidate's
   * fields (the caps checked again against the tools registered now), and clears it. The policy
   * version is raised as for any attachment edit.
   */
  async promote(agentId: number, attachmentId: number): Promise<AttachmentView> {
    return this.sequelize.transaction(async (transaction) => {
      const attachment = await this.findAttachment(agentId, attachmentId, transaction);
      const candidate = attachment.candidate;
      if (candidate === null || candidate === undefined) throw new NoCandidateError(attachmentId);
      if (candidate.caps !== undefined) await promoteShadowCaps(this.sequelize, attachmentId, transaction);
      else await dropShadowCaps(this.sequelize, attachmentId, transaction);
      attachment.candidate = null;
      attachment.candidate_at = null;
      await this.applyTerms(
        attachment,
        {
          ...(candidate.rules !== undefined ? { rules: candidate.rules } : {}),
          ...(candidate.caps !== undefined ? { caps: candidate.caps } : {}),
          ...(candidate.approvers !== undefined
            ? { approval: candidate.approvers === null ? null : { approvers: candidate.approvers } }
            : {}),
          ...(candidate.allow_proactive !== undefined ? { allow_proactive: candidate.allow_proactive } : {}),
        },
        transaction,
        true,
      );
      return this.get(agentId, attachmentId, transaction);
    });
  }

  /** Drops the candidate; the live terms stay as they are. */
  async dropCandidate(agentId: number, attachmentId: number): Promise<void> {
    const dropped = await this.sequelize.transaction(async (transaction) => {
      const [, count] = await this.sequelize.query(
        'UPDATE agent_toolkits SET candidate = NULL, candidate_at = NULL WHERE id = $1 AND agent_id = $2 AND candidate IS NOT NULL',
        { bind: [attachmentId, agentId], transaction },
      );
      if (updatedRows(count) === 0) return false;
      // Its caps' counts go with it: nothing of the candidate is left to count.
      await dropShadowCaps(this.sequelize, attachmentId, transaction);
      return true;
    });
    if (dropped) return;
    await this.get(agentId, attachmentId);
    throw new NoCandidateError(attachmentId);
  }

  /** Writes the terms given over the attachment's (rules replace the whole list); `save` writes the row even when no term of it changed. */
  private async applyTerms(
    attachment: AgentToolkit,
    patch: {
      allow_proactive?: boolean;
      approval?: { approvers: string[] } | null;
      caps?: CapRule[];
      rules?: readonly { kind: RuleKind; pattern: string }[];
    },
    transaction: Transaction,
    save = false,
  ): Promise<void> {
    if (save || patch.allow_proactive !== undefined || patch.approval !== undefined || patch.caps !== undefined) {
      if (patch.allow_proactive !== undefined) attachment.allow_proactive = patch.allow_proactive;
      if (patch.approval !== undefined) attachment.approvers = patch.approval?.approvers ?? null;
      if (patch.caps !== undefined) attachment.caps = this.checkedCaps(patch.caps);
      attachment.changed('updated_at', true);
      await attachment.save({ transaction });
    }
    if (patch.rules !== undefined) {
      await this.models.AgentToolkitRule.destroy({ where: { agent_toolkit_id: attachment.id }, transaction });
      await this.writeRules(attachment.id, patch.rules, transaction);
    }
  }

  async detach(agentId: number, attachmentId: number): Promise<void> {
    const deleted = await this.sequelize.transaction(async (transaction) => {
      const count = await this.models.AgentToolkit.destroy({ where: { id: attachmentId, agent_id: agentId }, transaction });
      // A candidate goes with its attachment, and so do the shadow's counts of its caps.
      if (count > 0) await dropShadowCaps(this.sequelize, attachmentId, transaction);
      return count;
    });
    if (deleted === 0) throw new NotFoundError(`Attachment ${attachmentId} of agent ${agentId}`);
  }

  async addRule(agentId: number, attachmentId: number, given: RuleInput | Parsed<typeof ruleSchema>): Promise<RuleView> {
    const rule = checked(ruleSchema, given);
    return this.sequelize.transaction(async (transaction) => {
      const attachment = await this.findAttachment(agentId, attachmentId, transaction);
      try {
        const created = await this.models.AgentToolkitRule.create(
          { agent_toolkit_id: attachment.id, kind: rule.kind, pattern: rule.pattern },
          { transaction },
        );
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
      const deleted = await this.models.AgentToolkitRule.destroy({ where: { id: ruleId, agent_toolkit_id: attachment.id }, transaction });
      if (deleted === 0) throw new NotFoundError(`Rule ${ruleId} of attachment ${attachmentId}`);
    });
  }

  private async writeRules(
    attachmentId: number,
    rules: readonly { kind: RuleKind; pattern: string }[],
    transaction: Transaction,
  ): Promise<void> {
    // The same rule twice is one rule: patterns are compared after normalization.
    const unique = new Map(rules.map((r) => [`${r.kind} ${r.pattern}`, r]));
    await this.models.AgentToolkitRule.bulkCreate(
      [...unique.values()].map((r) => ({ agent_toolkit_id: attachmentId, kind: r.kind, pattern: r.pattern })),
      { transaction },
    );
  }

  /**
   * Caps name registered tools only: a typo is a 422 with what was meant, never a cap on nothing.
   * Two caps counting the same calls over the same window would share one count and each add to it,
   * so the second is a 422 too: one cap, with the limit meant.
   */
  private checkedCaps(caps: CapRule[]): CapRule[] {
    const seen = new Set<string>();
    const issues = caps.flatMap((cap, index) => {
      const counts = `${cap.tool_id ?? '*'}|${cap.per}|${cap.window_s}`;
      if (seen.has(counts)) {
        return [
          {
            loc: ['caps', index],
            msg: `an earlier cap already counts ${cap.tool_id ?? "all the toolkit's members"} per ${cap.per} over this window: keep one, with the limit you mean`,
            type: 'duplicate_cap',
          },
        ];
      }
      seen.add(counts);
      return cap.tool_id === null || this.manifest.get(cap.tool_id)
        ? []
        : [
            {
              loc: ['caps', index, 'tool_id'],
              msg: `no tool is registered as ${cap.tool_id}${closestHint(cap.tool_id, this.manifest.ids)}: name one, or null for all the toolkit's members`,
              type: 'unknown_tool',
            },
          ];
    });
    if (issues.length > 0) throw new ValidationError(issues, false);
    return caps;
  }

  /** Locks the attachment row so concurrent edits of one gate apply one after the other. */
  private async findAttachment(agentId: number, attachmentId: number, transaction: Transaction): Promise<AgentToolkit> {
    const attachment = await this.models.AgentToolkit.findOne({
      where: { id: attachmentId, agent_id: agentId },
      transaction,
      lock: transaction.LOCK.UPDATE,
    });
    if (!attachment) throw new NotFoundError(`Attachment ${attachmentId} of agent ${agentId}`);
    return attachment;
  }

  private async agentExists(agentId: number, transaction?: Transaction): Promise<void> {
    if (!(await this.models.Agent.findByPk(agentId, { attributes: ['id'], transaction }))) throw new NotFoundError(`Agent ${agentId}`);
  }

  private view(row: AgentToolkit): AttachmentView {
    if (!row.toolkit) throw new Error('attachment loaded without its toolkit');
    return {
      id: row.id,
      agent_id: row.agent_id,
      toolkit: toolkitView(row.toolkit, this.manifest),
      allow_proactive: row.allow_proactive,
      rules: (row.rules ?? []).map((r) => ({ id: r.id, kind: r.kind, pattern: r.pattern })),
      approval: row.approvers === null || row.approvers === undefined ? null : { approvers: [...row.approvers] },
      caps: (row.caps ?? []).map(capView),
      ...(row.candidate && row.candidate_at ? { candidate: candidateView(row.candidate, row.candidate_at) } : {}),
    };
  }
}

function candidateView(stored: StoredCandidate, since: Date): CandidateView {
  return {
    ...(stored.rules !== undefined ? { rules: stored.rules.map((r) => ({ kind: r.kind, pattern: r.pattern })) } : {}),
    ...(stored.caps !== undefined ? { caps: stored.caps.map(capView) } : {}),
    ...(stored.approvers !== undefined ? { approval: stored.approvers === null ? null : { approvers: [...stored.approvers] } } : {}),
    ...(stored.allow_proactive !== undefined ? { allow_proactive: stored.allow_proactive } : {}),
    since: since.toISOString(),
  };
}

/** What sequelize.query gives as an UPDATE's second value under pg: the row count (or the result holding it). */
function updatedRows(result: unknown): number {
  if (typeof result === 'number') return result;
  const count = (result as { rowCount?: number } | null)?.rowCount;
  return typeof count === 'number' ? count : 0;
}

/** A row deleted by a concurrent request between our read and our write. */
function gone(err: unknown): unknown {
  if (err instanceof ForeignKeyConstraintError) return new NotFoundError('The agent or toolkit');
  return err;
}

function closestHint(id: string, ids: ReadonlySet<string> | readonly string[]): string {
  const guess = closestToolId(id, [...ids]);
  return guess ? ` (did you mean ${guess}?)` : '';
}
