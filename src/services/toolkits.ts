// Toolkits as operators manage them: create, read, update, delete, with members checked against
// the manifest on the way in and stale members reported on the way out.
import { Op, UniqueConstraintError, where, fn, col, type Sequelize } from 'sequelize';
import { z } from 'zod';
import type { Models, Toolkit } from '../../models';
import { systemKeySchema } from '../../models/toolkit';
import { closestToolId } from '../core/closest-tool';
import type { ToolManifest } from '../core/tool-manifest';
import { ConflictError, NotFoundError, ValidationError, type ValidationIssue } from '../errors';
import { checked, type Parsed } from '../http/parse';
import { name, text } from '../http/fields';
import { TOOLKIT_NAME_MAX } from '../core/legacy-enabled-tools';

/** What a caller gives to create a toolkit, or to change one (every field optional). */
export const toolkitInputSchema = z.strictObject({
  name: name(TOOLKIT_NAME_MAX),
  description: text(2000).optional(),
  // Any string here: the service checks it against the manifest and suggests what was meant.
  member_tool_ids: z.array(text(64).min(1)).max(500, 'at most 500 members'),
});
export const toolkitPatchSchema = toolkitInputSchema.partial();
/** What a caller may pass. */
export type ToolkitInput = z.input<typeof toolkitInputSchema>;
export type ToolkitPatch = z.input<typeof toolkitPatchSchema>;

/** A toolkit as the routes and a host's code read it. */
export const toolkitViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  member_tool_ids: z.array(z.string()),
  stale_tool_ids: z.array(z.string()).describe('members whose tool is no longer registered: skipped, never granted'),
  system_key: systemKeySchema.nullable(),
});
export type ToolkitView = z.output<typeof toolkitViewSchema>;

export function toolkitView(
  toolkit: Pick<Toolkit, 'id' | 'name' | 'description' | 'member_tool_ids' | 'system_key'>,
  manifest: ToolManifest,
): ToolkitView {
  return {
    id: toolkit.id,
    name: toolkit.name,
    description: toolkit.description,
    member_tool_ids: [...toolkit.member_tool_ids],
    stale_tool_ids: toolkit.member_tool_ids.filter((id) => !manifest.has(id)),
    system_key: toolkit.system_key ?? null,
  };
}

export class ToolkitService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly manifest: ToolManifest,
    private readonly models: Models,
  ) {}

  async list(): Promise<ToolkitView[]> {
    const rows = await this.models.Toolkit.findAll({ order: [['id', 'ASC']] });
    return rows.map((t) => toolkitView(t, this.manifest));
  }

  async get(id: number): Promise<ToolkitView> {
    return toolkitView(await this.find(id), this.manifest);
  }

  async create(given: ToolkitInput | Parsed<typeof toolkitInputSchema>): Promise<ToolkitView> {
    const input = checked(toolkitInputSchema, given);
    const members = this.checkMembers(input.member_tool_ids, []);
    try {
      const toolkit = await this.models.Toolkit.create({
        name: input.name,
        description: input.description ?? '',
        member_tool_ids: members,
      });
      return toolkitView(toolkit, this.manifest);
    } catch (err) {
      throw nameConflict(err, input.name);
    }
  }

  /**
   * Gets the toolkit of this name (regardless of case, as names are unique), or creates it: for a
   * host's setup code that runs on every start. An existing toolkit is returned as it stands, with
   * `created: false`, whatever it holds now: what an operator changed is never overwritten. The
   * input is checked either way, so a typo in the code is found on every start.
   */
  async ensure(given: ToolkitInput): Promise<ToolkitView & { created: boolean }> {
    const input = checked(toolkitInputSchema, given);
    this.checkMembers(input.member_tool_ids, []);
    const found = await this.byName(input.name);
    if (found) return { ...toolkitView(found, this.manifest), created: false };
    try {
      return { ...(await this.create(input)), created: true };
    } catch (err) {
      // Another start created it between the read and the insert: that one is the toolkit.
      const raced = err instanceof ConflictError ? await this.byName(input.name) : null;
      if (raced) return { ...toolkitView(raced, this.manifest), created: false };
      throw err;
    }
  }

  async update(id: number, given: ToolkitPatch | Parsed<typeof toolkitPatchSchema>): Promise<ToolkitView> {
    const patch = checked(toolkitPatchSchema, given);
    return this.sequelize.transaction(async (transaction) => {
      const toolkit = await this.find(id, true, transaction);
      if (patch.member_tool_ids !== undefined) {
        if (toolkit.system_key === 'all_tools') {
          throw new ConflictError(
            'All Tools mirrors the tool manifest and is rewritten on every sync: change the manifest, or build your own toolkit.',
          );
        }
        toolkit.member_tool_ids = this.checkMembers(patch.member_tool_ids, toolkit.member_tool_ids);
      }
      if (patch.name !== undefined) toolkit.name = patch.name;
      if (patch.description !== undefined) toolkit.description = patch.description;
      try {
        await toolkit.save({ transaction });
      } catch (err) {
        throw nameConflict(err, patch.name ?? toolkit.name);
      }
      return toolkitView(toolkit, this.manifest);
    });
  }

  async delete(id: number): Promise<void> {
    const toolkit = await this.find(id);
    if (toolkit.system_key) {
      throw new ConflictError(
        `${toolkit.name} is a system toolkit (${toolkit.system_key}) and cannot be deleted: detach it from agents instead.`,
      );
    }
    await toolkit.destroy();
  }

  private byName(name: string): Promise<Toolkit | null> {
    // Both sides folded by the database: JavaScript's toLowerCase() and a C-collated lower() disagree outside ASCII.
    return this.models.Toolkit.findOne({ where: where(fn('lower', col('name')), Op.eq, fn('lower', name)) });
  }

  private async find(id: number, lock = false, transaction?: import('sequelize').Transaction): Promise<Toolkit> {
    const toolkit = await this.models.Toolkit.findByPk(id, {
      transaction,
      lock: lock && transaction ? transaction.LOCK.UPDATE : undefined,
    });
    if (!toolkit) throw new NotFoundError(`Toolkit ${id}`);
    return toolkit;
  }

  /**
   * New members must be registered tools, so a typo is caught now rather than found later as a
   * missing grant. Members the toolkit already holds may stay even when stale (SEMANTICS §2).
   */
  private checkMembers(requested: string[], current: readonly string[]): string[] {
    const kept = new Set(current);
    const issues: ValidationIssue[] = [];
    requested.forEach((id, index) => {
      if (this.manifest.has(id) || kept.has(id)) return;
      const guess = closestToolId(id, this.manifest.ids);
      issues.push({
        loc: ['member_tool_ids', index],
        msg: `${JSON.stringify(id)} is not a registered tool${guess ? `: did you mean ${JSON.stringify(guess)}?` : '; GET /api/tools lists the registered ids'}`,
        type: 'unknown_tool',
      });
    });
    if (issues.length > 0) throw new ValidationError(issues, false);
    return [...new Set(requested)];
  }
}

function nameConflict(err: unknown, name: string): unknown {
  if (err instanceof UniqueConstraintError) {
    return new ConflictError(
      `A toolkit named ${JSON.stringify(name)} already exists (names are unique regardless of case): choose another name.`,
    );
  }
  return err;
}
