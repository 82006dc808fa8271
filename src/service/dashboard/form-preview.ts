// A form's Preview (SEMANTICS §15): the change the form's Save would make, checked first as Save
// checks it, then previewed over the dashboard's window. Nothing is written.
import type { PreviewInput } from '../../services/policy-preview';
import type { DashboardServices } from './dashboard-services';
import { attempt } from './form-data';
import type { FieldErrors } from './views/form';
import { PREVIEW_WINDOW, type FormPreview } from './views/policy-preview';

export type PreviewResult = { ok: true; preview: FormPreview } | { ok: false; status: number; errors: FieldErrors };

/**
 * `check` parses the form's input as Save would (so its refusals name the same fields, in the same
 * words); what the preview itself refuses is put beside `field`.
 */
export async function previewForm(
  d: Pick<DashboardServices, 'previews'>,
  change: () => PreviewInput['change'],
  agentNames: ReadonlyMap<number, string>,
  field: string,
): Promise<PreviewResult> {
  const result = await attempt(() => d.previews.preview({ change: change(), window: PREVIEW_WINDOW }), field);
  if (!result.ok) {
    const { change: refused, ...errors } = result.errors;
    return { ok: false, status: result.status, errors: refused ? { ...errors, [field]: [...(errors[field] ?? []), ...refused] } : errors };
  }
  return { ok: true, preview: { impact: result.value, agentNames } };
}

/** Whether the form was sent by its Preview button rather than its Save. */
export const PREVIEW_FIELD = 'preview';
