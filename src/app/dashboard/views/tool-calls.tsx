// Tool calls: an agent's recent records, newest first, filterable by status; refusals stand out.
import type { DenialReason, ToolCallStatus } from '../../../../models/tool-call';
import type { AgentView } from '../../../services/agents';
import type { ToolCallView } from '../../../services/tool-calls';
import { AgentFilter } from './agent-filter';
import { Layout, type PageContext } from './layout';
import { VisibleText } from './visible-text';
import { Table } from './table';

const STATUS_WORDS: Record<ToolCallStatus, string> = {
  started: 'started (running, or never completed)',
  success: 'success',
  failure: 'failure (the tool threw)',
  denied: 'denied (not offered to the run)',
  skipped: 'skipped (an enhancement left out)',
  pending_approval: 'pending approval (filed as a request; did not run)',
  interrupted: 'interrupted (its instance died while it ran: outcome unknown)',
};

/** A refusal's reason, in the words an operator acts on. */
const REASON_WORDS: Record<DenialReason, string> = {
  access_rules: "access rules (the agent's access rules refuse the sender)",
  not_offered: 'not offered (no attachment admitting the run carries it)',
  needs_approval: 'needs approval (it would have run at once, so nothing was filed)',
  cap_exceeded: 'cap exceeded (no room in its caps)',
  tool_changed: 'tool changed (held until an operator accepts its new definition)',
};

export function ToolCallsPage(props: {
  ctx: PageContext;
  agents: AgentView[];
  agentId: number | null;
  status: string;
  calls: ToolCallView[];
  limit: number;
  /** The cursor of the older records; null or none: none follow. */
  next?: string | null;
  /** Whether this page is past the newest records. */
  older?: boolean;
}) {
  const { ctx } = props;
  const filter = `agent=${props.agentId ?? ''}${props.status ? `&status=${encodeURIComponent(props.status)}` : ''}`;
  const agent = props.agents.find((a) => a.id === props.agentId);
  return (
    <Layout
      ctx={ctx}
      section="tool-calls"
      title="Tool calls"
      lead="Every execution, refusal and skip is recorded. A denied call is a tool the run was not offered, asked for anyway."
    >
      <AgentFilter
        ctx={ctx}
        path="/tool-calls"
        label="Filter tool calls"
        agents={props.agents}
        agentId={props.agentId}
        status={props.status}
        statuses={STATUS_WORDS}
      />
      {agent ? (
        <section aria-labelledby="records">
          <h2 id="records">
            {`${agent.name}: ${props.calls.length === props.limit ? `the ${props.limit} ${props.older ? 'next older' : 'most recent'}` : props.calls.length}${props.status ? ` ${props.status}` : ''} ${props.older && props.calls.length !== props.limit ? 'older ' : ''}${props.calls.length === 1 ? 'record' : 'records'}`}
          </h2>
          {props.calls.length === 0 ? (
            <p>No records{props.status ? ` with status ${props.status}` : ''}.</p>
          ) : (
            <Table
              caption={`Tool calls of ${agent.name}`}
              columns={['When (UTC)', 'Tool', 'Status', 'Reason', 'Run', 'Sender', 'Took', 'Error', 'Approval', 'Policy version']}
            >
              {props.calls.map((c) => (
                <tr key={c.id} id={`call-${c.id}`} class={c.status === 'denied' ? 'refused' : undefined}>
                  <td>{c.created_at ? c.created_at.replace('T', ' ').slice(0, 19) : '—'}</td>
                  <td>
                    <code>{c.tool_id}</code>
                  </td>
                  <td>
                    <span class={`badge ${c.status}`}>{c.status}</span>
                  </td>
                  <td>{c.reason === null ? '' : REASON_WORDS[c.reason]}</td>
                  <td>{c.run}</td>
                  <td>
                    {c.routing_key !== null ? (
                      <VisibleText text={c.routing_key} />
                    ) : (
                      <span class="muted">{c.run === 'scheduled' ? 'none (scheduled)' : 'no usable address'}</span>
                    )}
                  </td>
                  <td>{`${c.duration_ms} ms`}</td>
                  <td>{c.error === null ? '' : <VisibleText text={c.error} />}</td>
                  <td>
                    {c.approval_request_id === null ? (
                      ''
                    ) : (
                      <VisibleText text={`request ${c.approval_request_id}${c.approved_by ? `, approved by ${c.approved_by}` : ''}`} />
                    )}
                  </td>
                  <td>{c.policy_version === null ? <span class="muted">not recorded</span> : c.policy_version}</td>
                </tr>
              ))}
            </Table>
          )}
          <nav class="pages" aria-label="Pages of records">
            {props.older ? <a href={`${ctx.base}/tool-calls?${filter}`}>Newest records</a> : null}
            {props.next == null ? null : (
              <a href={`${ctx.base}/tool-calls?${filter}&after=${encodeURIComponent(props.next)}`} rel="next">
                Older records
              </a>
            )}
          </nav>
        </section>
      ) : null}
    </Layout>
  );
}
