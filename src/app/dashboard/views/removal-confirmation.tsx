// The step between a one-click removal (a gate rule, an access rule, a cap, Detach) and the change: what it
// would change, in the same preview panel a form's Preview shows, then Remove or Detach, or Cancel.
// Nothing is removed until the confirming form is sent.
import type { AgentView } from '../../../services/agents';
import { PostForm, type FieldErrors } from './form';
import { Layout, type PageContext } from './layout';
import { PreviewPanel, type FormPreview } from './policy-preview';

/** What the removal's preview showed, or why it could not be made (the removal may still be confirmed). */
export type RemovalPreview = { ok: true; preview: FormPreview } | { ok: false; errors: FieldErrors };

export function RemovalConfirmationPage(props: {
  ctx: PageContext;
  agent: AgentView;
  title: string;
  /** What is removed, in a sentence. */
  lead: string;
  /**
   * A removal that opens a gate (or lets every sender reach the agent), or lifts a tool's last cap,
   * says so first, in plain words.
   */
  opens: string | null;
  preview: RemovalPreview;
  /** Where the confirming form goes: the removal's own route, sent again with `confirmed`. */
  action: string;
  confirm: 'Remove' | 'Detach';
  cancelHref: string;
  /** What the confirming form sends besides `confirmed`: what was shown, for the route to check it still holds. */
  fields?: Readonly<Record<string, string>>;
}) {
  const { ctx, preview } = props;
  return (
    <Layout ctx={ctx} section="agents" title={props.title} lead={props.lead}>
      {props.opens !== null ? (
        <p class="warning-text" role="alert">
          {props.opens}
        </p>
      ) : null}
      {preview.ok ? (
        <PreviewPanel ctx={ctx} preview={preview.preview} level={2} action={props.confirm === 'Remove' ? 'remove' : 'detach'} />
      ) : (
        <p class="error-summary" role="alert">
          {`The preview could not be made, so what this would change is not shown: ${Object.values(preview.errors).flat().join(' ')}`}
        </p>
      )}
      <PostForm action={props.action} csrfToken={ctx.csrfToken} class="row" label={`Confirm: ${props.title}`}>
        <input type="hidden" name="confirmed" value="yes" />
        {Object.entries(props.fields ?? {}).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        <button type="submit" class="danger">
          {props.confirm}
        </button>
        <a href={props.cancelHref}>Cancel</a>
      </PostForm>
    </Layout>
  );
}
