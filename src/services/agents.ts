// Agents: create (with their first grants: Default Tools, named toolkits, or a legacy string),
// read, update and delete. Each change is one transaction.
import { literal, Op, QueryTypes, type Sequelize, type Transaction, type WhereOptions } from 'sequelize';
import { z } from 'zod';
import type { Agent, Models } from '../../models';
import { decodeCursor, encodeCursor } from '../core/page-cursor';
import type { ToolManifest } from '../core/tool-manifest';
import { storedAtSchema } from '../core/types';
import { scopedNameSql } from '../db/schema';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { checked, type Parsed } from '../http/parse';
import { bodyId, name, text } from '../http/fields';
import { routingKeyOf } from '../core/routing-key';
import { attachLegacyToolkit, type LegacyAttachResult } from './legacy-attach';
import { defaultToolsId } from './system-toolkits';

/** What a caller gives to create an agent, or to change one (every field optional, no toolkit_ids). */
export const agentInputSchema = z.strictObject({
  name: name(200),
  description: text(10_000).nullable().optional(),
  system_prompt: text(100_000).nullable().optional(),
  // The legacy string, taken as legacy clients send it (even odd spacing); bounded, one line.
  enabled_tools: text(10_000).nullable().optional(),
  toolkit_ids: z.array(bodyId).max(100, 'at most 100 toolkits').optional(),
  // Who the agent copies when it passes on a request it cannot decide (SEMANTICS §11), kept as its routing key.
  escalation_address: text(1000)
    .transform((value, ctx) => {
      const key = routingKeyOf(value);
      if (key === null) {
        ctx.addIssue({ code: 'custom', message: 'an escalation address is one email address, such as mara@thescoop.com' });
        return z.NEVER;
      }
      return key;
    })
    .nullable()
    .optional(),
});
export const agentPatchSchema = agentInputSchema.omit({ toolkit_ids: true }).partial();
/** What a caller may pass: ids as numbers or canonical text. */
export type AgentInput = z.input<typeof agentInputSchema>;
export type AgentPatch = z.input<typeof agentPatchSchema>;

/** An agent as the routes and a host's code read it. */
export const agentViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  system_prompt: z.string().nullable(),
  enabled_tools: z.string().nullable().describe('the legacy string, as stored'),
  escalation_address: z
    .string()
    .nullable()
    .describe('who the agent copies when it passes on a request it cannot decide (a routing key); null: no one'),
  created_at: storedAtSchema,
  updated_at: storedAtSchema,
});
export type AgentView = z.output<typeof agentViewSchema>;

/** A created or changed agent: with a legacy string, the grant it made. */
export const agentCreatedSchema = agentViewSchema.extend({
  enabled_tools_report: z
    .object({
      toolkit_id: z.number().int().nullable(),
      tool_ids: z.array(z.string()),
      unmatched: z.array(z.object({ token: z.string(), suggestion: z.string().nullable() })),
    })
    .optional()
    .describe('with enabled_tools: the legacy grant made, and the tokens that granted nothing'),
});
export type AgentCreated = z.output<typeof agentCreatedSchema>;

/** Which page of the agents list: after a cursor, at most `limit`, and only names that begin with `name`. */
export interface AgentPageQuery {
  /** The cursor a previous page gave as `next`; none: the first page. */
  after?: string;
  limit: number;
  /** A prefix of the name, regardless of case. */
  name?: string;
}

export interface AgentPage {
  agents: AgentView[];
  /** The cursor of the page after this one; null: this is the last. */
  next: string | null;
}

/** The list's order, as the index agents_toolgate_name_id_idx holds it (the migration 20261205000501). */
const SORT_NAME = 'lower("Agent"."name") COLLATE "C"';

export function agentView(agent: Agent): AgentView {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    system_prompt: agent.system_prompt,
    enabled_tools: agent.enabled_tools,
    escalation_address: agent.escalation_address ?? null,
    // An adopted legacy row may lack timestamps.
    created_at: agent.created_at ? agent.created_at.toISOString() : null,
    updated_at: agent.updated_at ? agent.updated_at.toISOString() : null,
  };
}

export class AgentService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly manifest: ToolManifest,
    private readonly models: Models,
  ) {}

  async list(): Promise<AgentView[]> {
    return (await this.models.Agent.findAll({ order: [['id', 'ASC']] })).map(agentView);
  }

  /**
   * A page of the agents by name (regardless of case), then id, starting just after the cursor's
   * agent: an agent added or removed between two pages moves no other, so a walk of the pages shows
   * each agent that stayed exactly once. Reads the page's rows of the name index, never every agent.
   */
  async page(query: AgentPageQuery): Promise<AgentPage> {
    const where: WhereOptions[] = [];
    const replacements: Record<string, unknown> = {};
    if (query.after !== undefined) {
      const key = decodeCursor(query.after, ['text', 'id']);
      if (key === null) throw badCursor();
      where.push(literal(`(${SORT_NAME}, "Agent"."id") > (:afterName COLLATE "C", :afterId)`));
      Object.assign(replacements, { afterName: key[0], afterId: key[1] });
    }
    if (query.name !== undefined && query.name !== '') {
      // The lower bound makes the prefix one range of the index; LIKE then ends it.
      where.push(literal(`${SORT_NAME} >= lower(:prefix) COLLATE "C" AND ${SORT_NAME} LIKE lower(:pattern) COLLATE "C"`));
      Object.assign(replacements, { prefix: query.name, pattern: `${query.name.replace(/[\\%_]/g, '\\$&')}%` });
    }
    const rows = await this.models.Agent.findAll({
      attributes: { include: [[literal(SORT_NAME), 'sort_name']] },
      where: { [Op.and]: where },
      order: [literal(SORT_NAME), ['id', 'ASC']],
      limit: query.limit + 1,
      replacements,
    });
    const shown = rows.slice(0, query.limit);
    const last = shown[shown.length - 1];
    const next = rows.length > query.limit && last ? encodeCursor([last.get('sort_name') as string, last.id]) : null;
    return { agents: shown.map(agentView), next };
  }

  async get(id: number): Promise<AgentView> {
    return agentView(await this.find(id));
  }

  /**
   * A new agent gets Default Tools with an open gate (SEMANTICS §2), unless the request names its
   * toolkits or carries a legacy `enabled_tools` string (even an empty one, which grants nothing).
   * Before the first sync there is no Default Tools, and so no tools.
   */
  async create(given: AgentInput | Parsed<typeof agentInputSchema>): Promise<AgentCreated> {
    const input = checked(agentInputSchema, given);
    return this.sequelize.transaction((transaction) => this.createIn(input, transaction));
  }

  private async createIn(input: z.output<typeof agentInputSchema>, transaction: Transaction): Promise<AgentCreated> {
    const agent = await this.models.Agent.create(
      {
        name: input.name,
        description: input.description ?? null,
        system_prompt: input.system_prompt ?? null,
        escalation_address: input.escalation_address ?? null,
        enabled_tools: input.enabled_tools ?? null,
      },
      { transaction },
    );
    let report: LegacyAttachResult | undefined;
    if (input.toolkit_ids !== undefined) {
      await this.checkToolkitsExist(input.toolkit_ids, transaction);
      await this.models.AgentToolkit.bulkCreate(
        [...new Set(input.toolkit_ids)].map((toolkit_id) => ({ agent_id: agent.id, toolkit_id, origin: 'operator' as const })),
        { transaction },
      );
    }
    if (input.enabled_tools !== undefined) {
      report = await attachLegacyToolkit(this.sequelize, this.manifest, agent.id, input.enabled_tools, transaction);
    }
    if (input.toolkit_ids === undefined && input.enabled_tools === undefined) {
      const defaults = await defaultToolsId(this.models, transaction);
      if (defaults !== null)
        await this.models.AgentToolkit.create({ agent_id: agent.id, toolkit_id: defaults, origin: 'default' }, { transaction });
    }
    return report ? { ...agentView(agent), enabled_tools_report: report } : agentView(agent);
  }

  /**
   * Gets the agent of this name (regardless of case), or creates it with create()'s grants: for a
   * host's setup code that runs on every start. An existing agent is returned as it stands, with
   * `created: false`, and its grants are not touched: what an operator changed is never overwritten.
   * Agent names are not unique, so two agents of this name are a 409 (ensure() cannot tell which).
   */
  async ensure(given: AgentInput): Promise<AgentCreated & { created: boolean }> {
    const input = checked(agentInputSchema, given);
    return this.sequelize.transaction(async (transaction) => {
      // Starts racing each other take turns on the name, so they make one agent, not one each.
      await this.sequelize.query(
        `SELECT pg_advisory_xact_lock(hashtext(${scopedNameSql('toolgate.agents.ensure')}), hashtext(lower(:name)))`,
        {
          replacements: { name: input.name },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      const found = await this.sequelize.query<{ id: number }>('SELECT id FROM agents WHERE lower(name) = lower(:name) ORDER BY id', {
        replacements: { name: input.name },
        type: QueryTypes.SELECT,
        transaction,
      });
      if (found.length > 1) {
        throw new ConflictError(
          `${found.length} agents are named ${JSON.stringify(input.name)} (ids ${found.map((a) => a.id).join(', ')}), so ensure() cannot tell which is meant: rename one, or use get(id).`,
        );
      }
      if (found.length === 1) return { ...agentView(await this.find(found[0]!.id, transaction)), created: false };
      return { ...(await this.createIn(input, transaction)), created: true };
    });
  }

  async update(id: number, given: AgentPatch | Parsed<typeof agentPatchSchema>): Promise<AgentCreated> {
    const patch = checked(agentPatchSchema, given);
    return this.sequelize.transaction(async (transaction) => {
      const agent = await this.find(id, transaction);
      if (patch.name !== undefined) agent.name = patch.name;
      if (patch.description !== undefined) agent.description = patch.description;
      if (patch.system_prompt !== undefined) agent.system_prompt = patch.system_prompt;
      if (patch.escalation_address !== undefined) agent.escalation_address = patch.escalation_address;
      let report: LegacyAttachResult | undefined;
      if (patch.enabled_tools !== undefined) {
        agent.enabled_tools = patch.enabled_tools;
        report = await attachLegacyToolkit(this.sequelize, this.manifest, agent.id, patch.enabled_tools, transaction);
      }
      agent.changed('updated_at', true);
      await agent.save({ transaction });
      return report ? { ...agentView(agent), enabled_tools_report: report } : agentView(agent);
    });
  }

  /**
   * Its documents, tasks and tool-call records go with it. Toolgate's own tables cascade, but an
   * adopted legacy table's foreign key may not, so they are deleted first, in the same transaction.
   */
  async delete(id: number): Promise<void> {
    await this.sequelize.transaction(async (transaction) => {
      await this.find(id, transaction);
      for (const table of ['documents', 'tasks', 'tool_calls']) {
        await this.sequelize.query(`DELETE FROM ${table} WHERE agent_id = :id`, { replacements: { id }, transaction });
      }
      await this.models.Agent.destroy({ where: { id }, transaction });
    });
  }

  private async find(id: number, transaction?: import('sequelize').Transaction): Promise<Agent> {
    const agent = await this.models.Agent.findByPk(id, { transaction, lock: transaction ? transaction.LOCK.UPDATE : undefined });
    if (!agent) throw new NotFoundError(`Agent ${id}`);
    return agent;
  }

  private async checkToolkitsExist(ids: number[], transaction: import('sequelize').Transaction): Promise<void> {
    const found = new Set((await this.models.Toolkit.findAll({ where: { id: ids }, attributes: ['id'], transaction })).map((t) => t.id));
    const issues = ids
      .map((id, index) => ({ id, index }))
      .filter(({ id }) => !found.has(id))
      .map(({ id, index }) => ({
        loc: ['toolkit_ids', index],
        msg: `no toolkit has id ${id}: GET /api/toolkits lists them`,
        type: 'unknown_toolkit',
      }));
    if (issues.length > 0) throw new ValidationError(issues, false);
  }
}

function badCursor(): ValidationError {
  return new ValidationError([
    {
      loc: ['query', 'after'],
      msg: 'not a cursor of this list: pass the `after` a page of it gave as its next (Toolgate-Next-Cursor), or none for the first page',
      type: 'invalid_cursor',
    },
  ]);
}
