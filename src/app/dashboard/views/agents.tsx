// Agents: the list, and an agent's page with its Agent Toolkits section and the attach form.
import type { AgentView } from '../../../services/agents';
import type { AttachmentView, RuleView } from '../../../services/attachments';
import type { ToolkitView } from '../../../services/toolkits';
import { AttachForm, type AttachFormValues } from './attach-form';
import { PostForm, TextField, type FieldErrors } from './form';
import { Layout, type PageContext } from './layout';
import { accessSummary, gateSummary } from './plain-words';
import { PreviewPanel, type FormPreview } from './policy-preview';
import { RuleForm, RulesTable, type RuleFormValues } from './rules-table';
import { Table } from './table';

export function AgentsPage(props: {
  ctx: PageContext;
  agents: AgentView[];
  toolkitsByAgent: Map<number, string[]>;
  accessRulesByAgent: Map<number, RuleView[]>;
  /** The beginning of a name searched for; '' lists every agent. */
  search: string;
  /** The cursor of the next page; null: this is the last. */
  next: string | null;
  /** Whether this is the list's first page (none before it). */
  first: boolean;
}) {
  const { ctx } = props;
  const searched = props.search === '' ? '' : `name=${encodeURIComponent(props.search)}&`;
  return (
    <Layout
      ctx={ctx}
      section="agents"
      title="Agents"
      lead="Each agent's tools come only from the toolkits attached to it. Open an agent to attach toolkits and set their terms."
    >
      <p>
        <a class="button" href={`${ctx.base}/agents/new`}>
          New agent
        </a>
      </p>
      <form method="get" action={`${ctx.base}/agents`} class="inline-form" role="search" aria-label="Find an agent">
        <TextField id="name" name="name" label="Name begins with" value={props.search} hint="Regardless of case." />
        <button type="submit">Find</button>
      </form>
      {props.agents.length === 0 ? (
        <p>
          {props.search !== ''
            ? `No agent's name begins with ${JSON.stringify(props.search)}.`
            : props.first
              ? 'No agents yet.'
              : 'No more agents.'}
        </p>
      ) : null}
      <Table
        caption={props.search !== '' ? 'The agents whose name begins so, by name' : 'The agents, by name'}
        columns={['Agent', 'Who reaches it', 'Toolkits attached']}
        actions="Links"
      >
        {props.agents.map((a) => {
          const toolkits = props.toolkitsByAgent.get(a.id) ?? [];
          return (
            <tr key={a.id}>
              <th scope="row">
                <a href={`${ctx.base}/agents/${a.id}`}>{a.name}</a> <span class="muted">#{a.id}</span>
                {a.description ? <p class="hint">{a.description}</p> : null}
              </th>
              <td>{accessSummary(props.accessRulesByAgent.get(a.id) ?? [])}</td>
              <td>{toolkits.length === 0 ? <span class="warning-text">None: this agent has no tools</span> : toolkits.join(', ')}</td>
              <td class="actions">
                <a href={`${ctx.base}/who-gets-what?agent=${a.id}`} aria-label={`Who gets what from ${a.name}`}>
                  Who gets what
                </a>
                <a href={`${ctx.base}/tool-calls?agent=${a.id}`} aria-label={`Tool calls of ${a.name}`}>
                  Tool calls
                </a>
              </td>
            </tr>
          );
        })}
      </Table>
      <nav class="pages" aria-label="Pages of agents">
        {props.first ? null : <a href={`${ctx.base}/agents${searched === '' ? '' : `?${searched.slice(0, -1)}`}`}>First page</a>}
        {props.next === null ? null : (
          <a href={`${ctx.base}/agents?${searched}after=${encodeURIComponent(props.next)}`} rel="next">
            Next page
          </a>
        )}
      </nav>
    </Layout>
  );
}

export function AgentPage(props: {
  ctx: PageContext;
  agent: AgentView;
  attachments: AttachmentView[];
  accessRules: RuleView[];
  toolkits: ToolkitView[];
  toolNames: Map<string, string>;
  attach: AttachFormValues;
  accessRule: RuleFormValues;
  accessErrors: FieldErrors;
  escalation: { value: string; errors: FieldErrors };
  /** What the access-rules form's Preview showed, shown above its Save. */
  accessPreview?: FormPreview | undefined;
}) {
  const { ctx, agent, attachments } = props;
  const attached = new Set(attachments.map((a) => a.toolkit.id));
  const attachable = props.toolkits.filter((t) => !attached.has(t.id));
  return (
    <Layout ctx={ctx} section="agents" title={agent.name} lead={agent.description ?? undefined}>
      <p class="row">
        <a href={`${ctx.base}/who-gets-what?agent=${agent.id}`}>Who gets what from {agent.name}</a>
        <a href={`${ctx.base}/tool-calls?agent=${agent.id}`}>Tool calls of {agent.name}</a>
      </p>
      {agent.enabled_tools !== null ? (
        <p class="hint">
          Legacy <code>enabled_tools</code>: <code>{agent.enabled_tools === '' ? '(empty)' : agent.enabled_tools}</code>
        </p>
      ) : null}

      <section aria-labelledby="escalation">
        <h2 id="escalation">Escalation address</h2>
        <p>
          Who {agent.name} copies when it passes on a request it cannot decide, or one that waits for approval. Copying makes them a
          participant of the thread, so their answer joins it.{' '}
          {agent.escalation_address ? <strong>Copies {agent.escalation_address}.</strong> : <strong>Copies no one.</strong>}
        </p>
        <PostForm
          action={`${ctx.base}/agents/${agent.id}/escalation`}
          csrfToken={ctx.csrfToken}
          class="inline-form"
          label="Escalation address"
        >
          <TextField
            id="escalation_address"
            name="escalation_address"
            label="Escalation address"
            value={props.escalation.value}
            errors={props.escalation.errors}
            placeholder="mara@thescoop.com"
          />
          <button type="submit">Save address</button>
        </PostForm>
      </section>

      <section aria-labelledby="access-rules">
        <h2 id="access-rules">Access rules</h2>
        <p>
          Who {agent.name} handles at all, decided before any tool: a sender these rules refuse gets nothing from {agent.name}.{' '}
          <strong>{gateSummary(props.accessRules)}</strong>
        </p>
        <RulesTable
          caption={`Access rules of ${agent.name}`}
          rules={props.accessRules}
          csrfToken={ctx.csrfToken}
          removeAction={(r) => `${ctx.base}/agents/${agent.id}/access-rules/${r.id}/delete`}
          removeLabel={(r) => `Remove access rule ${r.kind} ${r.pattern}`}
        />
        <RuleForm
          action={`${ctx.base}/agents/${agent.id}/access-rules`}
          csrfToken={ctx.csrfToken}
          label="Add an access rule"
          prefix="access"
          value={props.accessRule}
          errors={props.accessErrors}
          hint="The same patterns as a sender gate's. Scheduled runs have no sender and are never refused by these rules."
          submit="Add access rule"
          previewable
          preview={props.accessPreview ? <PreviewPanel ctx={ctx} preview={props.accessPreview} /> : null}
        />
      </section>

      <section aria-labelledby="agent-toolkits">
        <h2 id="agent-toolkits">Agent Toolkits</h2>
        {attachments.length === 0 ? (
          <p class="warning-text">No toolkit is attached: {agent.name} has no tools at all.</p>
        ) : (
          <Table
            caption={`Toolkits attached to ${agent.name}`}
            columns={['Toolkit', 'Tools', 'Sender gate', 'Approval', 'Scheduled runs']}
            actions="Settings"
          >
            {attachments.map((a) => (
              <tr key={a.id}>
                <th scope="row">{a.toolkit.name}</th>
                <td>
                  <ul class="inline">
                    {a.toolkit.member_tool_ids.map((id) => (
                      <li key={id} class={a.toolkit.stale_tool_ids.includes(id) ? 'stale' : undefined}>
                        {a.toolkit.stale_tool_ids.includes(id) ? `${id} (no longer registered)` : (props.toolNames.get(id) ?? id)}
                      </li>
                    ))}
                  </ul>
                </td>
                <td>
                  {gateSummary(a.rules)}
                  {a.rules.length > 0 ? (
                    <ul class="rules">
                      {a.rules.map((r) => (
                        <li key={r.id}>
                          <span class={`badge ${r.kind}`}>{r.kind}</span> <code>{r.pattern}</code>
                        </li>
                      ))}
                    </ul>
                  ) : null}
                </td>
                <td>
                  {a.approval === null
                    ? 'None'
                    : a.approval.approvers.length === 0
                      ? 'By an operator'
                      : `By ${a.approval.approvers.join(', ')}`}
                </td>
                <td>{a.allow_proactive ? 'Allowed' : 'Off'}</td>
                <td class="actions">
                  <a href={`${ctx.base}/agents/${agent.id}/toolkits/${a.id}`} aria-label={`Configure Access Settings of ${a.toolkit.name}`}>
                    Configure Access Settings
                  </a>
                </td>
              </tr>
            ))}
          </Table>
        )}

        <h3 id="attach">Attach a toolkit</h3>
        <AttachForm ctx={ctx} agentId={agent.id} agentName={agent.name} attachable={attachable} form={props.attach} />
      </section>
    </Layout>
  );
}
