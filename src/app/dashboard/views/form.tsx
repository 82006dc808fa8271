// Form controls with a visible label, an accessible name, and their error beside them (linked by
// aria-describedby, so a screen reader reads the reason with the field).
import type { ComponentChildren, VNode } from 'preact';

/** Messages per field name, from a refused submission. */
export type FieldErrors = Record<string, string[]>;

export function ErrorSummary({ errors }: { errors: FieldErrors }) {
  const all = Object.values(errors).flat();
  if (all.length === 0) return null;
  return (
    <div class="error-summary" role="alert">
      <p>
        <strong>{all.length === 1 ? 'This could not be saved:' : `These ${all.length} things stopped it from being saved:`}</strong>
      </p>
      <ul>
        {all.map((message) => (
          <li key={message}>{message}</li>
        ))}
      </ul>
    </div>
  );
}

function FieldError({ id, messages }: { id: string; messages: string[] | undefined }) {
  if (!messages || messages.length === 0) return null;
  return (
    <p class="field-error" id={`${id}-error`}>
      {messages.join(' ')}
    </p>
  );
}

/** What a control says about itself: invalid or not, and which hint and error describe it. */
interface ControlAria {
  'aria-invalid': 'true' | undefined;
  'aria-describedby': string | undefined;
}

interface FieldFrame {
  id: string;
  name: string;
  label: string;
  errors?: FieldErrors;
  hint?: string;
  /** A class beside `field`, for a field laid out apart from the others (`fit`: as wide as its control). */
  class?: string;
}

/** The label, the hint, the control and its error, linked to one another. */
function Field(props: FieldFrame & { control: (aria: ControlAria) => VNode }) {
  const messages = props.errors?.[props.name];
  const invalid = (messages?.length ?? 0) > 0;
  const described = [props.hint ? `${props.id}-hint` : null, invalid ? `${props.id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div class={['field', props.class, invalid ? 'invalid' : null].filter(Boolean).join(' ')}>
      <label for={props.id}>{props.label}</label>
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.control({ 'aria-invalid': invalid ? 'true' : undefined, 'aria-describedby': described })}
      <FieldError id={props.id} messages={messages} />
    </div>
  );
}

export function TextField(props: FieldFrame & { value?: string; required?: boolean; placeholder?: string; multiline?: boolean }) {
  const common = { id: props.id, name: props.name, required: props.required };
  return (
    <Field
      {...props}
      control={(aria) =>
        props.multiline ? (
          <textarea {...common} {...aria} rows={3}>
            {props.value ?? ''}
          </textarea>
        ) : (
          <input {...common} {...aria} type="text" value={props.value ?? ''} placeholder={props.placeholder} autoComplete="off" />
        )
      }
    />
  );
}

export function SelectField(props: FieldFrame & { options: { value: string; label: string }[]; value?: string }) {
  return (
    <Field
      {...props}
      control={(aria) => (
        <select id={props.id} name={props.name} {...aria}>
          {props.options.map((o) => (
            <option key={o.value} value={o.value} selected={o.value === props.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    />
  );
}

export function Checkbox(props: {
  id: string;
  name: string;
  value?: string;
  label: ComponentChildren;
  checked?: boolean;
  description?: ComponentChildren;
}) {
  return (
    <div class="check">
      <input
        type="checkbox"
        id={props.id}
        name={props.name}
        value={props.value ?? 'on'}
        checked={props.checked}
        aria-describedby={props.description ? `${props.id}-description` : undefined}
      />
      <label for={props.id}>{props.label}</label>
      {props.description ? (
        <p class="hint" id={`${props.id}-description`}>
          {props.description}
        </p>
      ) : null}
    </div>
  );
}

/** A POST form with its CSRF token. */
export function PostForm(props: { action: string; csrfToken: string; children: ComponentChildren; class?: string; label?: string }) {
  return (
    <form method="post" action={props.action} class={props.class} aria-label={props.label} noValidate>
      <input type="hidden" name="_csrf" value={props.csrfToken} />
      {props.children}
    </form>
  );
}
