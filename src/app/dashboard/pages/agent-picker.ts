// The Agent field of the pages that show one agent's records (Tool calls, Approvals, Who gets what):
// a page of agents by name, those whose name begins with `agent_name` when one is given, after the
// cursor `agents_after` (the agents list's own, src/services/agents.ts), and the one asked for by
// `?agent=` (an agent list row's links) wherever it sorts. It reads one page of the name index,
// never every agent.
import type { Request } from 'express';
import { NotFoundError } from '../../../errors';
import type { AgentPage, AgentView } from '../../../services/agents';
import type { DashboardServices } from '../dashboard-services';
import { chosenAgent, queryText } from '../form-data';

/** How many agents the field offers besides the one asked for. */
const PICKER_AGENTS = 100;

export interface PickedAgents {
  agents: AgentView[];
  agentId: number | null;
  /** The beginning of a name the field was narrowed to; '' for none. */
  search: string;
  /** The cursor of the field's next page of agents; null: there is none. */
  next: string | null;
  /** Whether the field shows a later page than the first. */
  later: boolean;
  /** The cursor the field's page was read after; null on the first. */
  after: string | null;
}

export async function pickAgent(d: DashboardServices, req: Request): Promise<PickedAgents> {
  const search = queryText(req, 'agent_name').trim().slice(0, 200);
  const after = queryText(req, 'agents_after');
  const page = await agentPage(d, search, after);
  const first = page.agents;
  const found = { search, next: page.next, later: page.later, after: page.later ? after : null };
  const wanted = Number(queryText(req, 'agent'));
  if (Number.isSafeInteger(wanted) && wanted > 0 && !first.some((a) => a.id === wanted)) {
    try {
      const chosen = await d.agents.get(wanted);
      return { agents: [chosen, ...first], agentId: chosen.id, ...found };
    } catch (err) {
      // An agent that is gone (a stale link) falls back to the first, as an unknown id always has.
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
  return { agents: first, agentId: chosenAgent(req, first), ...found };
}

/** A page of the field's agents; a cursor the list did not give is a 422 page, as on the Agents page. */
async function agentPage(d: DashboardServices, name: string, after: string): Promise<AgentPage & { later: boolean }> {
  const query = { limit: PICKER_AGENTS, ...(name ? { name } : {}) };
  if (after === '') return { ...(await d.agents.page(query)), later: false };
  return { ...(await d.agents.page({ ...query, after })), later: true };
}
