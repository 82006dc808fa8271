// The Agent field of the pages that show one agent's records (Tool calls, Approvals, Who gets what):
// the first agents by name, and the one asked for by `?agent=` (an agent list row's links) wherever
// it sorts. It reads one page of agents, never every agent.
import type { Request } from 'express';
import { NotFoundError } from '../../../errors';
import type { AgentView } from '../../../services/agents';
import type { DashboardServices } from '../dashboard-services';
import { chosenAgent, queryText } from '../form-data';

/** How many agents the field offers besides the one asked for. */
const PICKER_AGENTS = 100;

export async function pickAgent(d: DashboardServices, req: Request): Promise<{ agents: AgentView[]; agentId: number | null }> {
  const first = (await d.agents.page({ limit: PICKER_AGENTS })).agents;
  const wanted = Number(queryText(req, 'agent'));
  if (Number.isSafeInteger(wanted) && wanted > 0 && !first.some((a) => a.id === wanted)) {
    try {
      const chosen = await d.agents.get(wanted);
      return { agents: [chosen, ...first], agentId: chosen.id };
    } catch (err) {
      // An agent that is gone (a stale link) falls back to the first, as an unknown id always has.
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
  return { agents: first, agentId: chosenAgent(req, first) };
}
