// New agent: a name, a description, and the toolkits it starts with, as a checklist (Default Tools
// checked, as the API would give it).
import type { ToolkitView } from '../../../services/toolkits';
import { Checkbox, ErrorSummary, PostForm, TextField, type FieldErrors } from './form';
import { Layout, type PageContext } from './layout';

export interface AgentFormValues {
  name: string;
  description: string;
  toolkitIds: string[];
}

export function AgentFormPage(props: {
  ctx: PageContext;
  toolkits: ToolkitView[];
  toolNames: Map<string, string>;
  values: AgentFormValues;
  errors: FieldErrors;
}) {
  const { ctx, values, errors } = props;
  return (
    <Layout ctx={ctx} section="agents" title="New agent">
      <ErrorSummary errors={errors} />
      <PostForm action={`${ctx.base}/agents`} csrfToken={ctx.csrfToken}>
        <TextField id="name" name="name" label="Name" value={values.name} errors={errors} required />
        <TextField
          id="description"
          name="description"
          label="Description"
          value={values.description}
          errors={errors}
          multiline
          hint="Optional: what the agent does."
        />
        <fieldset>
          <legend>Toolkits</legend>
          <p class="hint">
            The agent's tools come only from these, each attached with an open gate and scheduled runs off; set their terms afterwards. With
            none, it has no tools.
          </p>
          {errors.toolkit_ids ? <p class="field-error">{errors.toolkit_ids.join(' ')}</p> : null}
          <div class="checklist">
            {props.toolkits.map((t) => (
              <Checkbox
                key={t.id}
                id={`toolkit-${t.id}`}
                name="toolkit"
                value={String(t.id)}
                checked={values.toolkitIds.includes(String(t.id))}
                label={t.name}
                description={t.member_tool_ids.map((id) => props.toolNames.get(id) ?? id).join(', ') || 'No members'}
              />
            ))}
          </div>
        </fieldset>
        <div class="row">
          <button type="submit">Create agent</button>
          <a href={`${ctx.base}/agents`}>Cancel</a>
        </div>
      </PostForm>
    </Layout>
  );
}
