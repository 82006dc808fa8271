// A list of allow/deny rules with a Remove button each (which leads to the removal's confirmation
// page, its preview first), and the form that adds one: a sender gate's rules on Configure Access
// Settings, and an agent's access rules on its page.
import type { ComponentChildren } from 'preact';
import type { RuleView } from '../../../services/attachments';
import { PostForm, SelectField, TextField, type FieldErrors } from './form';
import { PreviewButton } from './policy-preview';
import { Table } from './table';

/** What the add-a-rule form was sent with, shown again beside its errors. */
export interface RuleFormValues {
  kind: string;
  pattern: string;
}

/**
 * The form that adds one rule. `prefix` sets the fields apart where a page has two rule forms
 * (`access`: ids access-kind and access-pattern, labels "Access kind" and "Access pattern").
 */
export function RuleForm(props: {
  action: string;
  csrfToken: string;
  label: string;
  prefix?: string;
  value: RuleFormValues;
  errors: FieldErrors;
  hint: string;
  submit: string;
  /** A second button that stores the rule as candidate terms instead (SEMANTICS §15). */
  tryAsCandidate?: boolean;
  /** A Preview button beside Save, and what the last Preview showed, above them. */
  previewable?: boolean;
  preview?: ComponentChildren;
}) {
  const id = (field: string) => (props.prefix ? `${props.prefix}-${field}` : field);
  const label = (field: string) =>
    props.prefix ? `${props.prefix[0]!.toUpperCase()}${props.prefix.slice(1)} ${field}` : `${field[0]!.toUpperCase()}${field.slice(1)}`;
  return (
    <PostForm action={props.action} csrfToken={props.csrfToken} class="rule-form" label={props.label}>
      <SelectField
        id={id('kind')}
        name="kind"
        label={label('kind')}
        value={props.value.kind}
        options={[
          { value: 'allow', label: 'allow' },
          { value: 'deny', label: 'deny' },
        ]}
        errors={props.errors}
      />
      <TextField
        id={id('pattern')}
        name="pattern"
        label={label('pattern')}
        value={props.value.pattern}
        errors={props.errors}
        placeholder="*@thescoop.com"
        hint={props.hint}
      />
      {props.preview}
      <button type="submit">{props.submit}</button>
      {props.previewable && <PreviewButton action={props.action} />}
      {props.tryAsCandidate && <TryAsCandidate />}
    </PostForm>
  );
}

export function RulesTable(props: {
  caption: string;
  rules: RuleView[];
  csrfToken: string;
  removeAction: (rule: RuleView) => string;
  removeLabel: (rule: RuleView) => string;
}) {
  if (props.rules.length === 0) return null;
  return (
    <Table caption={props.caption} columns={['Kind', 'Pattern']} actions="Remove">
      {props.rules.map((r) => (
        <tr key={r.id}>
          <td>
            <span class={`badge ${r.kind}`}>{r.kind}</span>
          </td>
          <td>
            <code>{r.pattern}</code>
          </td>
          <td class="actions">
            <PostForm action={props.removeAction(r)} csrfToken={props.csrfToken}>
              <button type="submit" class="link" aria-label={props.removeLabel(r)}>
                Remove
              </button>
            </PostForm>
          </td>
        </tr>
      ))}
    </Table>
  );
}

/**
 * Beside a form's Save: sends the same form, but its terms are stored as the attachment's candidate
 * (SEMANTICS §15), tried on live traffic before they are made live.
 */
export function TryAsCandidate() {
  return (
    <button type="submit" name="try" value="candidate">
      Try as candidate
    </button>
  );
}
