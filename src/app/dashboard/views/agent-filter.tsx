// The form at the top of a page of one agent's records (Tool calls, Approvals): which agent, and
// which status, as a GET form.
import { SelectField } from './form';
import type { PageContext } from './layout';

export function AgentFilter<S extends string>(props: {
  ctx: PageContext;
  /** The page's path, e.g. `/tool-calls`. */
  path: string;
  label: string;
  agents: readonly { id: number; name: string }[];
  agentId: number | null;
  status: string;
  statuses: Readonly<Record<S, string>>;
}) {
  return (
    <form method="get" action={`${props.ctx.base}${props.path}`} class="inline-form" aria-label={props.label}>
      <SelectField
        id="agent"
        name="agent"
        label="Agent"
        value={props.agentId ? String(props.agentId) : undefined}
        options={props.agents.map((a) => ({ value: String(a.id), label: a.name }))}
      />
      <SelectField
        id="status"
        name="status"
        label="Status"
        value={props.status}
        options={[
          { value: '', label: 'Any status' },
          ...(Object.entries(props.statuses) as [S, string][]).map(([value, label]) => ({ value, label })),
        ]}
      />
      <button type="submit">Show</button>
    </form>
  );
}
