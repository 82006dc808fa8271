// An attachment's candidate terms (SEMANTICS §15) and what they would have changed so far, with
// Promote and Drop. Routing keys and tool ids are shown as text; nothing here is taken from a message.
import type { AgentView } from '../../../services/agents';
import type { CandidateShadowView, CandidateView } from '../../../services/attachments';
import type { ShadowSenders } from '../../../services/shadow-summary';
import { PostForm } from './form';
import { Layout, type PageContext } from './layout';
import { gateSummary } from './plain-words';
import { recordHref } from './policy-preview';
import { Table } from './table';

const WOULD_BE: Record<string, string> = {
  admitted: 'would run',
  denied: 'would be refused',
  pending_approval: 'would wait for approval',
};

export function CandidatePage(props: { ctx: PageContext; agent: AgentView; view: CandidateShadowView }) {
  const { ctx, agent, view } = props;
  const here = `${ctx.base}/agents/${agent.id}/toolkits/${view.id}`;
  const shadow = view.shadow;
  return (
    <Layout ctx={ctx} section="agents" title="Candidate terms" lead={`${view.toolkit.name}, attached to ${agent.name}.`}>
      <p>
        <a href={here}>Back to Configure Access Settings</a>
      </p>
      <p>
        Runs are still offered and checked by the live terms only. Each run also resolves these terms, and the records say where they would
        have decided otherwise. Nothing is granted by them until they are promoted.
      </p>

      <section aria-labelledby="terms">
        <h2 id="terms">Terms tried</h2>
        <CandidateTerms candidate={view.candidate} />
        <p class="hint">Set {new Date(view.candidate.since).toISOString()}; what follows counts from then.</p>
      </section>

      <section aria-labelledby="shadow">
        <h2 id="shadow">What it would change so far</h2>
        <p>
          <strong>
            {shadow.differing_runs} of {shadow.runs} {shadow.runs === 1 ? 'run' : 'runs'} would be offered other tools;{' '}
            {shadow.calls_changed} {shadow.calls_changed === 1 ? 'call' : 'calls'} would have been decided otherwise.
          </strong>
        </p>
        {shadow.over_cap > 0 && (
          <p>
            Of those, {shadow.over_cap} {shadow.over_cap === 1 ? 'call' : 'calls'} ran that these caps would refuse as over the cap.
          </p>
        )}
        <SendersTable caption="Who would gain tools" rows={shadow.gaining} />
        <SendersTable caption="Who would lose tools" rows={shadow.losing} />
        {shadow.calls.length > 0 && (
          <Table
            caption="Calls it would have decided otherwise (the latest)"
            captionShown
            columns={['Record', 'Tool', 'Sender', 'Was', 'With the candidate']}
          >
            {shadow.calls.map((c) => (
              <tr key={c.call_id}>
                <td>
                  <a href={recordHref(ctx, { agent_id: agent.id, call_id: c.call_id })}>{`Call ${c.call_id}`}</a>
                </td>
                <td>
                  <code>{c.tool_id}</code>
                </td>
                <td>{c.routing_key ?? 'no sender'}</td>
                <td>{c.status}</td>
                <td>{`${WOULD_BE[c.would_be] ?? c.would_be} (${c.reason})`}</td>
              </tr>
            ))}
          </Table>
        )}
      </section>

      <section aria-labelledby="decide">
        <h2 id="decide">Promote or drop</h2>
        <p>Promoting makes these the live terms at once, in one change, on every instance. Dropping leaves the live terms as they are.</p>
        <PostForm action={`${here}/candidate/promote`} csrfToken={ctx.csrfToken} label="Promote">
          <button type="submit">Promote to live terms</button>
        </PostForm>
        <PostForm action={`${here}/candidate/drop`} csrfToken={ctx.csrfToken} label="Drop">
          <button type="submit" class="danger">
            Drop candidate
          </button>
        </PostForm>
      </section>
    </Layout>
  );
}

/** The candidate's terms, field by field: those it leaves out follow the live terms. */
export function CandidateTerms(props: { candidate: CandidateView }) {
  const c = props.candidate;
  const approval =
    c.approval === undefined
      ? null
      : c.approval === null
        ? 'off'
        : `on, approvers ${c.approval.approvers.join(', ') || 'none (an operator)'}`;
  return (
    <ul>
      <li>
        Gate:{' '}
        {c.rules === undefined
          ? 'as live'
          : `${c.rules.map((r) => `${r.kind} ${r.pattern}`).join(', ') || 'no rules'}. ${gateSummary(c.rules)}`}
      </li>
      <li>Approval: {approval ?? 'as live'}</li>
      <li>
        Caps:{' '}
        {c.caps === undefined
          ? 'as live'
          : c.caps.map((cap) => `${cap.limit} ${cap.tool_id ?? 'calls of all members'} per ${cap.per} per ${cap.window}`).join('; ') ||
            'none'}
      </li>
      <li>Scheduled runs: {c.allow_proactive === undefined ? 'as live' : c.allow_proactive ? 'allowed' : 'not allowed'}</li>
    </ul>
  );
}

function SendersTable(props: { caption: string; rows: ShadowSenders[] }) {
  if (props.rows.length === 0) return <p>{`${props.caption}: no one so far.`}</p>;
  return (
    <Table caption={props.caption} captionShown columns={['Sender', 'Tools', 'Runs']}>
      {props.rows.map((r) => (
        <tr key={`${r.run} ${r.routing_key ?? ''}`}>
          <td>{r.run === 'scheduled' ? 'scheduled runs' : (r.routing_key ?? 'no sender address')}</td>
          <td>{r.tools.join(', ')}</td>
          <td>{r.runs}</td>
        </tr>
      ))}
    </Table>
  );
}
