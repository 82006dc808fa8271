// The attach form of an agent's page. No toolkit is chosen beforehand: a toolkit's gate starts
// open, so the operator names the toolkit, and may name who it admits in the same step.
import type { ToolkitView } from '../../../services/toolkits';
import { ErrorSummary, PostForm, SelectField, TextField, type FieldErrors } from './form';
import type { PageContext } from './layout';

/** The attach form as sent, shown again beside its errors. */
export interface AttachFormValues {
  toolkit_id: string;
  allow: string;
  errors: FieldErrors;
}

export const NO_TOOLKIT_CHOSEN = 'Choose the toolkit to attach: none is chosen.';

export function AttachForm(props: {
  ctx: PageContext;
  agentId: number;
  agentName: string;
  attachable: ToolkitView[];
  form: AttachFormValues;
}) {
  const { ctx, form } = props;
  return (
    <>
      <ErrorSummary errors={form.errors} />
      {props.attachable.length === 0 ? (
        <p>Every toolkit is already attached to {props.agentName}.</p>
      ) : (
        <PostForm
          action={`${ctx.base}/agents/${props.agentId}/toolkits`}
          csrfToken={ctx.csrfToken}
          class="inline-form"
          label="Attach a toolkit"
        >
          <SelectField
            id="toolkit"
            name="toolkit_id"
            label="Toolkit"
            value={form.toolkit_id}
            options={[{ value: '', label: 'Choose a toolkit' }, ...props.attachable.map((t) => ({ value: String(t.id), label: t.name }))]}
            errors={form.errors}
            hint="Its other terms (approval, caps, scheduled runs) are set on the next page."
          />
          <AdmitOnlyField value={form.allow} errors={form.errors} agentName={props.agentName} />
          <button type="submit">Attach toolkit</button>
        </PostForm>
      )}
    </>
  );
}

export function AdmitOnlyField(props: { value: string; errors: FieldErrors; agentName: string }) {
  return (
    <TextField
      id="allow"
      name="allow"
      label="Admit only (optional)"
      value={props.value}
      errors={props.errors}
      placeholder="*@thescoop.com"
      hint={`Allow patterns, separated by commas: only senders they match unlock the toolkit. Left empty, its gate is open to every sender who reaches ${props.agentName}, and a toolkit with gate tools asks you to confirm that first.`}
    />
  );
}
