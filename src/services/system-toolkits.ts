// The two system toolkits: All Tools mirrors the live manifest on every sync; Default Tools is
// created once with the builtins and is the operators' to curate afterwards. Safe to run on every
// deploy, from several instances at once: syncs queue on one advisory lock.
import { col, fn, where, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import type { Models, Toolkit } from '../../models';
import { systemKeySchema, type SystemKey } from '../../models/toolkit';
import type { ToolManifest } from '../core/tool-manifest';
import { lockKeySql } from '../db/schema';
import { ConflictError } from '../errors';
import { toolkitView, toolkitViewSchema } from './toolkits';

/** What a sync found and changed. */
export const syncReportSchema = z.object({
  all_tools: toolkitViewSchema,
  default_tools: toolkitViewSchema,
  /** System toolkits this sync created (empty on every run after the first). */
  created: z.array(systemKeySchema),
  /** How All Tools' membership changed to match the manifest. */
  all_tools_added: z.array(z.string()),
  all_tools_removed: z.array(z.string()),
  /** Members of Default Tools no longer registered: kept, skipped at resolution, reported here. */
  stale_skipped: z.array(z.string()),
});
export type SyncReport = z.output<typeof syncReportSchema>;

const SYSTEM_TOOLKITS: Record<SystemKey, { name: string; description: string }> = {
  all_tools: { name: 'All Tools', description: 'Every registered tool; rewritten to the live manifest on each sync.' },
  default_tools: {
    name: 'Default Tools',
    description: 'Attached to every new agent with an open gate; curate it into the baseline every agent should get.',
  },
};

// A constant key for pg_advisory_xact_lock: every instance's sync waits for the one before.
const SYNC_LOCK_KEY = 0x746f6f6c; // "tool"
/** A toolgate in a schema of its own waits for its own syncs only. */
const SYNC_LOCK = lockKeySql('toolgate system toolkits', ':key');

export async function syncSystemToolkits(sequelize: Sequelize, models: Models, manifest: ToolManifest): Promise<SyncReport> {
  return sequelize.transaction(async (transaction) => {
    await sequelize.query(`SELECT pg_advisory_xact_lock(${SYNC_LOCK})`, { replacements: { key: SYNC_LOCK_KEY }, transaction });
    const created: SystemKey[] = [];
    const liveIds = manifest.list().map((t) => t.id);

    const all = await findOrCreate(models, 'all_tools', liveIds, transaction, created);
    const before = new Set(all.member_tool_ids);
    const added = liveIds.filter((id) => !before.has(id));
    const removed = all.member_tool_ids.filter((id) => !manifest.has(id));
    if (added.length > 0 || removed.length > 0 || all.member_tool_ids.join(',') !== liveIds.join(',')) {
      all.member_tool_ids = liveIds;
      await all.save({ transaction });
    }

    const defaults = await findOrCreate(models, 'default_tools', manifest.builtinIds(), transaction, created);
    const defaultsView = toolkitView(defaults, manifest);
    return {
      all_tools: toolkitView(all, manifest),
      default_tools: defaultsView,
      created,
      all_tools_added: created.includes('all_tools') ? [] : added,
      all_tools_removed: removed,
      stale_skipped: defaultsView.stale_tool_ids,
    };
  });
}

async function findOrCreate(
  { Toolkit }: Models,
  key: SystemKey,
  members: string[],
  transaction: Transaction,
  created: SystemKey[],
): Promise<Toolkit> {
  const existing = await Toolkit.findOne({ where: { system_key: key }, transaction });
  if (existing) return existing;
  const { name, description } = SYSTEM_TOOLKITS[key];
  const clash = await Toolkit.findOne({ where: where(fn('lower', col('name')), name.toLowerCase()), transaction });
  if (clash) {
    throw new ConflictError(
      `An operator's toolkit is already named ${JSON.stringify(clash.name)} (id ${clash.id}), the name of the ${key} system toolkit: rename it, then sync again.`,
    );
  }
  created.push(key);
  return Toolkit.create({ name, description, member_tool_ids: members, system_key: key }, { transaction });
}

/** The Default Tools toolkit's id, or null before the first sync. */
export async function defaultToolsId({ Toolkit }: Models, transaction?: Transaction): Promise<number | null> {
  const toolkit = await Toolkit.findOne({ where: { system_key: 'default_tools' }, attributes: ['id'], transaction });
  return toolkit ? toolkit.id : null;
}
