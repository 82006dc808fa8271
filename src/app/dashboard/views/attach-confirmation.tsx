// The second step of attaching a toolkit that holds gate tools with an open gate: what every
// sender who reaches the agent would be offered, in plain words, then Confirm, Cancel, or the same
// attach behind an allow rule instead. Nothing is attached until one of the two forms is sent.
import type { ToolDefinition } from '../../../core/types';
import type { AgentView } from '../../../services/agents';
import type { RuleView } from '../../../services/attachments';
import type { ToolkitView } from '../../../services/toolkits';
import { confirmedTools, type OpenGateGrant } from '../open-gate';
import { AdmitOnlyField } from './attach-form';
import { PostForm } from './form';
import { Layout, type PageContext } from './layout';
import { accessSummary, andList } from './plain-words';

export function AttachConfirmationPage(props: {
  ctx: PageContext;
  agent: AgentView;
  toolkit: ToolkitView;
  grant: OpenGateGrant;
  /** The confirmed list it was sent with, when the toolkit has gained gate tools since. */
  added: ToolDefinition[];
  accessRules: RuleView[];
}) {
  const { ctx, agent, toolkit, grant } = props;
  const action = `${ctx.base}/agents/${agent.id}/toolkits`;
  const who = accessSummary(props.accessRules);
  return (
    <Layout ctx={ctx} section="agents" title={`Attach ${toolkit.name} to ${agent.name} with an open gate?`}>
      {props.added.length > 0 ? (
        <p class="error-summary" role="alert">
          {`${toolkit.name} has changed since you were asked: it now also holds ${andList(props.added.map((t) => t.id))}. Nothing was attached; confirm again for what it holds now.`}
        </p>
      ) : null}
      <p class="warning-text">
        {`Every sender who reaches ${agent.name} would be offered ${andList(grant.gate.map((t) => t.id))}, on every message: an open gate checks no one.`}
      </p>
      <p>
        {`Who reaches ${agent.name}: ${who.charAt(0).toLowerCase()}${who.slice(1)}.`}{' '}
        <a href={`${ctx.base}/agents/${agent.id}#access-rules`}>{`${agent.name}'s access rules`}</a>
      </p>
      <ul class="offered" aria-label={`The gate tools of ${toolkit.name}`}>
        {grant.gate.map((t) => (
          <li key={t.id}>
            {t.display_name} <code>{t.id}</code>: {t.summary}
          </li>
        ))}
      </ul>
      {grant.enhancement.length > 0 ? (
        <p>{`It also holds ${andList(grant.enhancement.map((t) => t.id))}: enhancement tools, which add to a run and never refuse one.`}</p>
      ) : null}
      <p class="hint">Scheduled runs start off, and no call needs approval, until you set that on Configure Access Settings.</p>
      <PostForm action={action} csrfToken={ctx.csrfToken} class="row" label="Confirm the open gate">
        <input type="hidden" name="toolkit_id" value={String(toolkit.id)} />
        <input type="hidden" name="confirmed" value={confirmedTools(grant)} />
        <button type="submit" class="danger">
          Confirm
        </button>
        <a href={`${ctx.base}/agents/${agent.id}#attach`}>Cancel</a>
      </PostForm>

      <h2 id="behind-a-rule">Or attach it behind a rule</h2>
      <PostForm action={action} csrfToken={ctx.csrfToken} class="inline-form" label="Attach behind a rule">
        <input type="hidden" name="toolkit_id" value={String(toolkit.id)} />
        <AdmitOnlyField value="" errors={{}} agentName={agent.name} />
        <button type="submit">Attach behind this rule</button>
      </PostForm>
    </Layout>
  );
}
