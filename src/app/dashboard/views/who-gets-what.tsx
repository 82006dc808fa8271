// Who gets what: a sender (or a scheduled run) and an agent in, the tools offered out, and for
// each attachment whether its gate admitted the run and why. The agent is picked from a page of
// agents by name, narrowed by the beginning of a name, as the agents list pages.
import { windowText } from '../../../core/cap-window';
import { capsOnTool } from '../../../core/resolution';
import type { Resolution, ToolDefinition, DispatchKind } from '../../../core/types';
import type { AgentView } from '../../../services/agents';
import { SelectField, TextField } from './form';
import { Layout, type PageContext } from './layout';
import { accessInWords, whyInWords } from './plain-words';
import { Table } from './table';

export interface WhoQuery {
  agentId: number | null;
  run: DispatchKind;
  sender: string;
}

/** The Agent field's page of agents: the name searched for ('' for none), and the way on. */
export interface AgentPicker {
  search: string;
  /** The cursor this page of agents was read after; null on the first. */
  after: string | null;
  next: string | null;
  later: boolean;
}

export function WhoGetsWhatPage(props: {
  ctx: PageContext;
  agents: AgentView[];
  picker: AgentPicker;
  query: WhoQuery;
  resolution: Resolution | null;
  tools: readonly ToolDefinition[];
}) {
  const { ctx, query, resolution, picker } = props;
  const searched = picker.search === '' ? '' : `agent_name=${encodeURIComponent(picker.search)}&`;
  const names = new Map(props.tools.map((t) => [t.id, t.display_name]));
  const agent = props.agents.find((a) => a.id === query.agentId);
  return (
    <Layout
      ctx={ctx}
      section="who-gets-what"
      title="Who gets what"
      lead="Type a sender to see which tools a message from them would be offered, and why. The address is taken as given."
    >
      <form method="get" action={`${ctx.base}/who-gets-what`} class="inline-form" role="search" aria-label="Find an agent">
        <TextField id="agent_name" name="agent_name" label="Agent name begins with" value={picker.search} hint="Regardless of case." />
        <button type="submit">Find</button>
      </form>
      {props.agents.length === 0 && picker.search !== '' ? (
        <p class="warning-text">{`No agent's name begins with ${JSON.stringify(picker.search)}.`}</p>
      ) : null}
      <nav class="pages" aria-label="Pages of agents">
        {picker.later ? <a href={`${ctx.base}/who-gets-what${searched === '' ? '' : `?${searched.slice(0, -1)}`}`}>First agents</a> : null}
        {picker.next === null ? null : (
          <a href={`${ctx.base}/who-gets-what?${searched}agents_after=${encodeURIComponent(picker.next)}`} rel="next">
            More agents
          </a>
        )}
      </nav>
      <form method="get" action={`${ctx.base}/who-gets-what`} class="inline-form" aria-label="Check a run">
        {picker.search === '' ? null : <input type="hidden" name="agent_name" value={picker.search} />}
        {picker.later && picker.after !== null ? <input type="hidden" name="agents_after" value={picker.after} /> : null}
        <SelectField
          id="agent"
          name="agent"
          label="Agent"
          value={query.agentId ? String(query.agentId) : undefined}
          options={props.agents.map((a) => ({ value: String(a.id), label: a.name }))}
        />
        <fieldset class="radios">
          <legend>Run</legend>
          <div class="check">
            <input type="radio" id="run-sender" name="run" value="sender" checked={query.run === 'sender'} />
            <label for="run-sender">A message from a sender</label>
          </div>
          <div class="check">
            <input type="radio" id="run-scheduled" name="run" value="scheduled" checked={query.run === 'scheduled'} />
            <label for="run-scheduled">A scheduled run</label>
          </div>
        </fieldset>
        <TextField id="sender" name="sender" label="Sender" value={query.sender} placeholder="jane@acme.com" />
        <button type="submit">Check</button>
      </form>

      {resolution && agent ? (
        <section aria-labelledby="answer" class="answer">
          <h2 id="answer">
            {resolution.run === 'scheduled'
              ? `A scheduled run of ${agent.name}`
              : `A message from ${query.sender.trim() === '' ? '(no sender)' : query.sender} to ${agent.name}`}
          </h2>
          {resolution.run === 'sender' ? (
            <p>
              Routing key:{' '}
              {resolution.routing_key === null ? (
                <strong>none (not a usable address): only open gates admit this run</strong>
              ) : (
                <code>{resolution.routing_key}</code>
              )}
            </p>
          ) : null}
          {resolution.access ? (
            <p class={resolution.access.admitted ? undefined : 'warning-text'}>{accessInWords(resolution.access, agent.name)}</p>
          ) : null}
          <h3>Tools offered</h3>
          {resolution.tools.length === 0 ? (
            <p class="warning-text">No tools: this run is offered nothing.</p>
          ) : (
            <ul class="offered">
              {resolution.tools.map((id) => (
                <li key={id}>
                  {names.get(id) ?? id} <code>{id}</code> {approvalNote(resolution, id)} {capNote(resolution, id)}
                </li>
              ))}
            </ul>
          )}
          <h3>Why, attachment by attachment</h3>
          {resolution.attachments.length === 0 ? <p>{agent.name} has no toolkit attached.</p> : null}
          <Table caption="Each attachment's verdict" columns={['Toolkit', 'Verdict', 'Why', 'Its tools']}>
            {resolution.attachments.map((a) => (
              <tr key={a.attachment_id} class={a.admitted ? 'admitted' : 'refused'}>
                <th scope="row">
                  <a href={`${ctx.base}/agents/${agent.id}/toolkits/${a.attachment_id}`}>{a.toolkit_name}</a>
                </th>
                <td>
                  <span class={`badge ${a.admitted ? 'success' : 'denied'}`}>{a.admitted ? 'Admitted' : 'Not admitted'}</span>
                </td>
                <td>
                  {whyInWords(a)}
                  {a.approval && a.admitted ? (
                    <p class="hint">
                      {a.needs_approval
                        ? `Its tools need approval for this run (approvers: ${a.approval.approvers.join(', ') || 'an operator only'}).`
                        : 'This sender is one of its approvers: its tools run as usual.'}
                    </p>
                  ) : null}
                  {a.caps.map((cap, i) => (
                    <p class="hint" key={i}>
                      {`Cap: ${cap.remaining === undefined ? '' : `${cap.remaining} left of `}${cap.limit} ${cap.tool_id ? `${cap.tool_id} calls` : 'calls of its tools'} per ${cap.per} per ${windowText(cap.window_s)}.`}
                    </p>
                  ))}
                </td>
                <td>{a.tools.map((id) => names.get(id) ?? id).join(', ') || <span class="muted">none</span>}</td>
              </tr>
            ))}
          </Table>
        </section>
      ) : null}
    </Layout>
  );
}

/** Whether an offered tool can only be requested, or runs as usual although an attachment would have it approved. */
function approvalNote(resolution: Resolution, id: string): string | null {
  if (resolution.needs_approval.includes(id)) return '(needs approval: a call files a request)';
  const gated = resolution.attachments.some((a) => a.admitted && a.needs_approval && a.tools.includes(id));
  return gated ? '(no approval needed: another attachment offers it without approval)' : null;
}

/** Whether an offered tool's calls count toward a cap, or run uncapped although an attachment caps it. */
function capNote(resolution: Resolution, id: string): string | null {
  if (resolution.capped.includes(id)) return '(capped: see the caps below)';
  const capping = resolution.attachments.some((a) => a.admitted && a.tools.includes(id) && capsOnTool(a.caps, id).length > 0);
  return capping ? '(no cap: another attachment offers it uncapped)' : null;
}
