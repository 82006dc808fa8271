// New toolkit and Edit toolkit: name, description, and the members as a checklist of every tool in
// the manifest, each with its display name and summary. An MCP server's tool is listed like any
// other; a held one is marked (it can be a member, and is offered once accepted), and a stale
// member says that its server no longer lists it. Preview beside Save says what the members would
// change for the agents that hold the toolkit (none, for a new one).
import type { ToolDefinition } from '../../../core/types';
import type { PinStatus } from '../../../mcp/pin-listing';
import type { ToolkitView } from '../../../services/toolkits';
import { Checkbox, ErrorSummary, PostForm, TextField, type FieldErrors } from './form';
import { Layout, type PageContext } from './layout';
import { PreviewButton, PreviewPanel, type FormPreview } from './policy-preview';
import { SYSTEM_LABELS, type McpToolStates } from './toolkits';

export interface ToolkitFormValues {
  name: string;
  description: string;
  members: string[];
}

export function ToolkitFormPage(props: {
  ctx: PageContext;
  tools: readonly ToolDefinition[];
  mcpTools: McpToolStates;
  values: ToolkitFormValues;
  errors: FieldErrors;
  toolkit?: ToolkitView;
  /** What the form's Preview showed, above its Save. */
  preview?: FormPreview | undefined;
}) {
  const { ctx, toolkit, values, errors } = props;
  const editing = toolkit !== undefined;
  const membersLocked = toolkit?.system_key === 'all_tools';
  const registered = new Set(props.tools.map((t) => t.id));
  const stale = values.members.filter((id) => !registered.has(id));
  const action = editing ? `${ctx.base}/toolkits/${toolkit.id}` : `${ctx.base}/toolkits`;
  return (
    <Layout ctx={ctx} section="toolkits" title={editing ? `Edit ${toolkit.name}` : 'New toolkit'}>
      {toolkit?.system_key ? <p class="badge">{SYSTEM_LABELS[toolkit.system_key]}</p> : null}
      <ErrorSummary errors={errors} />
      <PostForm action={action} csrfToken={ctx.csrfToken}>
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
                label={
                  props.mcpTools.get(tool.id)?.status === 'held' ? (
                    <>
                      {tool.display_name} <span class="badge held">held</span>
                    </>
                  ) : (
                    tool.display_name
                  )
                }
                description={
                  <>
                    {tool.summary} <code>{tool.id}</code>
                    {tool.kind === 'enhancement' ? ' · enhancement: never refuses, left out when not granted' : ''}
                    <McpMark ctx={ctx} state={props.mcpTools.get(tool.id)} />
                  </>
                }
              />
            ))}
            {stale.map((id) => {
              const mcp = props.mcpTools.get(id);
              return (
                <Checkbox
                  key={id}
                  id={`member-${id}`}
                  name="member"
                  value={id}
                  checked
                  label={mcp ? `${id} (stale: its MCP server no longer lists it)` : `${id} (no longer registered)`}
                  description={
                    mcp
                      ? `Stale: ${mcp.server} no longer lists this tool, so it is skipped and never granted; it is granted again if the server lists it again. Uncheck it to remove it.`
                      : 'Stale: its tool is gone from the code, so it is skipped and never granted. Uncheck it to remove it.'
                  }
                />
              );
            })}
          </div>
        </fieldset>
        {props.preview ? <PreviewPanel ctx={ctx} preview={props.preview} level={2} /> : null}
        <div class="row">
          <button type="submit">{editing ? 'Save' : 'Create toolkit'}</button>
          <PreviewButton action={action} />
          <a href={`${ctx.base}/toolkits`}>Cancel</a>
        </div>
      </PostForm>
    </Layout>
  );
}

function McpMark({ ctx, state }: { ctx: PageContext; state: { status: PinStatus; server: string } | undefined }) {
  if (state?.status !== 'held') return null;
  return (
    <>
      {' · held: its MCP server changed its definition, so it is offered to no run until an operator accepts the new one on '}
      <a href={`${ctx.base}/mcp/servers/${encodeURIComponent(state.server)}`}>{`${state.server}'s tools`}</a>
    </>
  );
}
