// A form's Preview (SEMANTICS §15): the change the form's Save would make, checked first as Save
// checks it, then previewed over the dashboard's window. Nothing is written.
import type { Request } from 'express';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { PreviewImpact } from '../../core/policy-preview';
import type { PreviewInput } from '../../services/policy-preview';
import type { DashboardServices } from './dashboard-services';
import { attempt, textField } from './form-data';
import type { FieldErrors } from './views/form';
import { PREVIEW_WINDOW, type FormPreview } from './views/policy-preview';

export type PreviewResult = { ok: true; preview: FormPreview } | { ok: false; status: number; errors: FieldErrors };

/** The field a form's Preview button sends (views/policy-preview.tsx). */
const PREVIEW_FIELD = 'preview';

/** Whether the form was sent by its Preview button rather than its Save. */
export function previewing(req: Request): boolean {
  return textField(req, PREVIEW_FIELD) === 'yes';
}

/**
 * `change` parses the form's input as Save would (so its refusals name the same fields, in the same
 * words) and gives the change; what the preview itself refuses is put beside `field`. `reached`:
 * the one agent the change reaches, or how many it reaches (a toolkit's holders).
 */
export async function previewForm(
  d: Pick<DashboardServices, 'previews' | 'sequelize'>,
  change: () => PreviewInput['change'],
  reached: { id: number; name: string } | number,
  field: string,
): Promise<PreviewResult> {
  const result = await attempt(() => d.previews.preview({ change: change(), window: PREVIEW_WINDOW }), field);
  if (!result.ok) {
    const { change: refused, ...errors } = result.errors;
    return { ok: false, status: result.status, errors: refused ? { ...errors, [field]: [...(errors[field] ?? []), ...refused] } : errors };
  }
  const agentNames =
    typeof reached === 'number' ? await namesOf(d.sequelize, [...mentioned(result.value)]) : new Map([[reached.id, reached.name]]);
  return { ok: true, preview: { impact: result.value, reached: typeof reached === 'number' ? reached : 1, agentNames } };
}

/** A change that reaches no agent's tools, for `reaches`: checked as Save checks it, and not replayed. */
export async function unreplayed(check: () => unknown, reaches: 'no_agent' | 'manifest', field: string): Promise<PreviewResult> {
  const result = await attempt(async () => check(), field);
  return result.ok ? { ok: true, preview: { reaches } } : result;
}

/** The agents the answer names: no more than its lists hold, never every holder of a toolkit. */
function mentioned(impact: PreviewImpact): Set<number> {
  const { senders, scheduled, calls } = impact;
  const entries = [...senders.gaining, ...senders.losing, ...scheduled.gaining, ...scheduled.losing, ...calls.changed];
  return new Set(entries.map((e) => e.agent_id));
}

async function namesOf(sequelize: Sequelize, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sequelize.query<{ id: number; name: string }>('SELECT id, name FROM agents WHERE id IN (:ids)', {
    replacements: { ids },
    type: QueryTypes.SELECT,
  });
  return new Map(rows.map((r) => [r.id, r.name]));
}
