// Toolkits: the list, and the confirmation before one is deleted.
import type { ToolDefinition } from '../../../core/types';
import type { ToolkitView } from '../../../services/toolkits';
import { PostForm } from './form';
import type { PinStatus } from '../../../mcp/pin-listing';
import { Layout, type PageContext } from './layout';
import { Table } from './table';

/** The state of each MCP server's tool, by tool id, and its server. */
export type McpToolStates = ReadonlyMap<string, { status: PinStatus; server: string }>;

export const SYSTEM_LABELS: Record<string, string> = {
  all_tools: 'System: every registered tool',
  default_tools: 'System: given to every new agent',
};

export function ToolkitsPage(props: {
  ctx: PageContext;
  toolkits: ToolkitView[];
  tools: readonly ToolDefinition[];
  mcpTools: McpToolStates;
  usage: Map<number, number>;
}) {
  const { ctx } = props;
  const names = new Map(props.tools.map((t) => [t.id, t.display_name]));
  return (
    <Layout
      ctx={ctx}
      section="toolkits"
      title="Toolkits"
      lead="A toolkit is a named bundle of tools. Attaching one to an agent grants its tools, on the attachment's terms."
    >
      <p>
        <a class="button" href={`${ctx.base}/toolkits/new`}>
          New toolkit
        </a>
      </p>
      <Table caption="Every toolkit" columns={['Name', 'Members', 'Attached to']} actions="Actions">
        {props.toolkits.map((t) => (
          <tr key={t.id}>
            <th scope="row">
              <a href={`${ctx.base}/toolkits/${t.id}`}>{t.name}</a>
              {t.system_key ? <span class="badge">{SYSTEM_LABELS[t.system_key]}</span> : null}
              {t.description ? <p class="hint">{t.description}</p> : null}
            </th>
            <td>
              {t.member_tool_ids.length === 0 ? <span class="muted">No members</span> : null}
              <ul class="inline">
                {t.member_tool_ids.map((id) => (
                  <li
                    key={id}
                    class={t.stale_tool_ids.includes(id) ? 'stale' : props.mcpTools.get(id)?.status === 'held' ? 'held' : undefined}
                  >
                    {memberText(id, t.stale_tool_ids.includes(id), names.get(id), props.mcpTools.get(id)?.status)}
                  </li>
                ))}
              </ul>
            </td>
            <td>{plural(props.usage.get(t.id) ?? 0, 'agent')}</td>
            <td class="actions">
              <a href={`${ctx.base}/toolkits/${t.id}`} aria-label={`Edit ${t.name}`}>
                Edit
              </a>
              {t.system_key ? null : (
                <a href={`${ctx.base}/toolkits/${t.id}/delete`} aria-label={`Delete ${t.name}`}>
                  Delete
                </a>
              )}
            </td>
          </tr>
        ))}
      </Table>
    </Layout>
  );
}

export function DeleteToolkitPage(props: { ctx: PageContext; toolkit: ToolkitView; agents: { id: number; name: string }[] }) {
  const { ctx, toolkit } = props;
  return (
    <Layout ctx={ctx} section="toolkits" title={`Delete ${toolkit.name}?`}>
      {props.agents.length === 0 ? (
        <p>No agent holds this toolkit. Deleting it changes no agent's tools.</p>
      ) : (
        <>
          <p>
            {`${plural(props.agents.length, 'agent')} hold${props.agents.length === 1 ? 's' : ''} this toolkit. Deleting it revokes those grants and their gate rules at once:`}
          </p>
          <ul>
            {props.agents.map((a) => (
              <li key={a.id}>
                <a href={`${ctx.base}/agents/${a.id}`}>{a.name}</a>
              </li>
            ))}
          </ul>
        </>
      )}
      <PostForm action={`${ctx.base}/toolkits/${toolkit.id}/delete`} csrfToken={ctx.csrfToken} class="row">
        <button type="submit" class="danger">
          Delete toolkit
        </button>
        <a href={`${ctx.base}/toolkits`}>Cancel</a>
      </PostForm>
    </Layout>
  );
}

function memberText(id: string, stale: boolean, name: string | undefined, mcp: string | undefined): string {
  if (stale) return mcp ? `${id} (stale: its MCP server no longer lists it)` : `${id} (no longer registered)`;
  return mcp === 'held' ? `${name ?? id} (held until accepted)` : (name ?? id);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
