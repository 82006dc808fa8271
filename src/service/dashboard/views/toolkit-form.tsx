// New toolkit and Edit toolkit: name, description, and the members as a checklist of every tool in
// the manifest, each with its display name and summary.
import type { ToolDefinition } from '../../../core/types';
import type { ToolkitView } from '../../../services/toolkits';
import { Checkbox, ErrorSummary, PostForm, TextField, type FieldErrors } from './form';
import { Layout, type PageContext } from './layout';
import { SYSTEM_LABELS } from './toolkits';

export interface ToolkitFormValues {
  name: string;
  description: string;
  members: string[];
}

export function ToolkitFormPage(props: {
  ctx: PageContext;
  tools: readonly ToolDefinition[];
  values: ToolkitFormValues;
  errors: FieldErrors;
  toolkit?: ToolkitView;
}) {
  const { ctx, toolkit, values, errors } = props;
  const editing = toolkit !== undefined;
  const membersLocked = toolkit?.system_key === 'all_tools';
  const registered = new Set(props.tools.map((t) => t.id));
  const stale = values.members.filter((id) => !registered.has(id));
  return (
    <Layout ctx={ctx} section="toolkits" title={editing ? `Edit ${toolkit.name}` : 'New toolkit'}>
      {toolkit?.system_key ? <p class="badge">{SYSTEM_LABELS[toolkit.system_key]}</p> : null}
      <ErrorSummary errors={errors} />
      <PostForm action={editing ? `${ctx.base}/toolkits/${toolkit.id}` : `${ctx.base}/toolkits`} csrfToken={ctx.csrfToken}>
        <TextField id="name" name="name" label="Name" value={values.name} errors={errors} required />
        <TextField
          id="description"
          name="description"
          label="Description"
          value={values.description}
          errors={errors}
          multiline
          hint="Optional: what the toolkit is for, for the operators who attach it."
        />
        <fieldset disabled={membersLocked}>
          <legend>Members</legend>
          {membersLocked ? <p class="hint">All Tools always holds every registered tool: each sync rewrites its members.</p> : null}
          {errors.member_tool_ids ? (
            <p class="field-error" id="members-error">
              {errors.member_tool_ids.join(' ')}
            </p>
          ) : null}
          <div class="checklist">
            {props.tools.map((tool) => (
              <Checkbox
                key={tool.id}
                id={`member-${tool.id}`}
                name="member"
                value={tool.id}
                checked={values.members.includes(tool.id)}
                label={tool.display_name}
                description={
                  <>
                    {tool.summary} <code>{tool.id}</code>
                    {tool.kind === 'enhancement' ? ' · enhancement: never refuses, left out when not granted' : ''}
                  </>
                }
              />
            ))}
            {stale.map((id) => (
              <Checkbox
                key={id}
                id={`member-${id}`}
                name="member"
                value={id}
                checked
                label={`${id} (no longer registered)`}
                description="Stale: its tool is gone from the code, so it is skipped and never granted. Uncheck it to remove it."
              />
            ))}
          </div>
        </fieldset>
        <div class="row">
          <button type="submit">{editing ? 'Save' : 'Create toolkit'}</button>
          <a href={`${ctx.base}/toolkits`}>Cancel</a>
        </div>
      </PostForm>
    </Layout>
  );
}
