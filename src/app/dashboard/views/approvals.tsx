// Approvals: an agent's approval requests (SEMANTICS §12), pending ones first, each with the exact
// input it would run, who asked and where, and Approve and Deny; decided ones with who decided and
// what came of the one execution.
import { requesterName, type ApprovalRequestView, type ApprovalStatus } from '../../../core/approval-request';
import type { AgentView } from '../../../services/agents';
import { AgentFilter } from './agent-filter';
import { PostForm } from './form';
import { Layout, type PageContext } from './layout';
import { VisibleText } from './visible-text';
import { Table } from './table';

const STATUS_WORDS: Record<ApprovalStatus, string> = {
  pending: 'pending (waiting for a decision)',
  approved: 'approved (ran once)',
  denied: 'denied (never runs)',
  expired: 'expired (never runs)',
  void: 'void (its terms changed; never runs)',
};

export function ApprovalsPage(props: {
  ctx: PageContext;
  agents: AgentView[];
  agentId: number | null;
  status: string;
  requests: ApprovalRequestView[];
  limit: number;
  /** The cursor of the older requests; null or none: none follow. */
  next?: string | null;
  /** Whether this page is past the newest requests. */
  older?: boolean;
}) {
  const { ctx } = props;
  // The status is always given: without it the page shows the pending ones.
  const filter = `agent=${props.agentId ?? ''}&status=${encodeURIComponent(props.status)}`;
  const agent = props.agents.find((a) => a.id === props.agentId);
  return (
    <Layout
      ctx={ctx}
      section="approvals"
      title="Approvals"
      lead="A call that needs approval does not run: it waits here with the exact input it was asked with. Approving runs that input once, on the requester's behalf; denying means it never runs."
    >
      <AgentFilter
        ctx={ctx}
        path="/approvals"
        label="Filter approval requests"
        agents={props.agents}
        agentId={props.agentId}
        status={props.status}
        statuses={STATUS_WORDS}
      />
      {agent ? (
        <section aria-labelledby="requests">
          <h2 id="requests">{`${agent.name}: ${props.requests.length === 0 ? 'no' : props.requests.length === props.limit ? `the ${props.limit} ${props.older ? 'next older' : 'most recent'}` : props.requests.length}${props.status ? ` ${props.status}` : ''} approval ${props.requests.length === 1 ? 'request' : 'requests'}`}</h2>
          {props.requests.length === 0 ? null : (
            // Focusable, so the keyboard scrolls it too when it is wider than the window. On a narrow
            // window its rows stack instead (dashboard.css), each cell under its column's name.
            <div class="table-scroll" role="region" aria-label={`Approval requests of ${agent.name}`} tabIndex={0}>
              <Table
                caption={`Approval requests of ${agent.name}`}
                class="stacked"
                columns={['Request', 'Tool and input', 'Asked by', 'Status', 'Decision']}
              >
                {props.requests.map((r) => (
                  <tr key={r.id} class={r.status === 'pending' ? 'pending' : undefined}>
                    <th scope="row">
                      Request {r.id}
                      {r.status === 'pending' ? (
                        <p class="hint">
                          Decision code <code class="decision-code">{r.code}</code>: an approver replies <q>approve {r.code}</q> or{' '}
                          <q>deny {r.code}</q> in its thread
                        </p>
                      ) : null}
                      <p class="hint">{`Filed ${when(r.created_at)}${r.status === 'pending' ? `, expires ${when(r.expires_at)}` : ''}`}</p>
                    </th>
                    <td data-label="Tool and input">
                      <code>{r.tool}</code>
                      <pre class="input">
                        <VisibleText text={JSON.stringify(r.input, null, 2)} />
                      </pre>
                    </td>
                    <td data-label="Asked by">
                      {r.requested_by.routing_key !== null ? (
                        <VisibleText text={r.requested_by.routing_key} />
                      ) : (
                        <span class="muted">{requesterName(r.requested_by)}</span>
                      )}
                      {r.requested_by.thread_id ? (
                        <p class="hint">
                          in thread <code>{r.requested_by.thread_id}</code>
                        </p>
                      ) : null}
                    </td>
                    <td data-label="Status">
                      <span class={`badge ${r.status}`}>{r.status}</span>
                      {r.void_reason ? <p class="hint">{r.void_reason}</p> : null}
                    </td>
                    <td data-label="Decision">{r.status === 'pending' ? <Decide ctx={ctx} request={r} /> : <Decided request={r} />}</td>
                  </tr>
                ))}
              </Table>
            </div>
          )}
          <nav class="pages" aria-label="Pages of requests">
            {props.older ? <a href={`${ctx.base}/approvals?${filter}`}>Newest requests</a> : null}
            {props.next == null ? null : (
              <a href={`${ctx.base}/approvals?${filter}&after=${encodeURIComponent(props.next)}`} rel="next">
                Older requests
              </a>
            )}
          </nav>
        </section>
      ) : null}
    </Layout>
  );
}

function Decide({ ctx, request }: { ctx: PageContext; request: ApprovalRequestView }) {
  const action = `${ctx.base}/approvals/${request.agent_id}/${request.id}`;
  return (
    <div class="row">
      <PostForm action={`${action}/approve`} csrfToken={ctx.csrfToken}>
        <button type="submit" aria-label={`Approve request ${request.id}`}>
          Approve
        </button>
      </PostForm>
      <PostForm action={`${action}/deny`} csrfToken={ctx.csrfToken}>
        <button type="submit" class="danger" aria-label={`Deny request ${request.id}`}>
          Deny
        </button>
      </PostForm>
    </div>
  );
}

function Decided({ request }: { request: ApprovalRequestView }) {
  const by = request.decided_by ? (request.decided_by.routing_key ?? `an operator (${request.decided_by.via})`) : null;
  const result = request.result;
  return (
    <>
      {by ? (
        <p>
          <VisibleText text={`By ${by}${request.decided_at ? `, ${when(request.decided_at)}` : ''}`} />
        </p>
      ) : null}
      {result ? (
        <p class={result.status === 'failure' ? 'warning-text' : undefined}>
          {result.status === 'success' ? 'Ran: ' : 'Ran, and failed: '}
          <code>
            <VisibleText text={result.status === 'success' ? JSON.stringify(result.output) : result.error} />
          </code>
        </p>
      ) : request.status === 'approved' ? (
        <p class="warning-text">Approved, with no result recorded: it was running, or the service stopped while it ran.</p>
      ) : null}
    </>
  );
}

function when(iso: string): string {
  return `${iso.replace('T', ' ').slice(0, 16)} UTC`;
}
