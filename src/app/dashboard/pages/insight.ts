// Who gets what (the explanation view) and Tool calls (the records), both read-only GET forms.
import { Router } from 'express';
import { routingKeyOf } from '../../../core/routing-key';
import type { Resolution } from '../../../core/types';
import { pageToolCalls } from '../../../services/tool-calls';
import type { DashboardServices } from '../dashboard-services';
import { pageContext, queryText } from '../form-data';
import { pickAgent } from './agent-picker';
import { renderPage } from '../render';
import { TOOL_CALL_STATUSES, type ToolCallStatus } from '../../../../models/tool-call';
import { ToolCallsPage } from '../views/tool-calls';
import { WhoGetsWhatPage, type WhoQuery } from '../views/who-gets-what';

const RECORDS_SHOWN = 100;

export function insightPages(d: DashboardServices): Router {
  const router = Router();

  router.get('/who-gets-what', async (req, res) => {
    const picked = await pickAgent(d, req);
    const { agents, agentId } = picked;
    const query: WhoQuery = {
      agentId,
      run: queryText(req, 'run') === 'scheduled' ? 'scheduled' : 'sender',
      sender: queryText(req, 'sender').slice(0, 1000),
    };
    // An answer once asked: a sender typed, or a scheduled run picked.
    const asked = query.run === 'scheduled' || 'sender' in req.query;
    let resolution: Resolution | null = null;
    if (asked && query.agentId !== null) {
      resolution = await d.runs.explain(
        query.agentId,
        query.run === 'scheduled' ? { kind: 'scheduled' } : { kind: 'sender', routing_key: routingKeyOf(query.sender) },
      );
    }
    renderPage(
      res,
      200,
      WhoGetsWhatPage({
        ctx: pageContext(req),
        agents,
        picker: { search: picked.search, after: picked.after, next: picked.next, later: picked.later },
        query,
        resolution,
        tools: d.registry.manifest.list(),
      }),
    );
  });

  router.get('/tool-calls', async (req, res) => {
    const { agents, agentId } = await pickAgent(d, req);
    const wanted = queryText(req, 'status');
    const status = (TOOL_CALL_STATUSES as readonly string[]).includes(wanted) ? (wanted as ToolCallStatus) : undefined;
    const after = queryText(req, 'after');
    const page =
      agentId === null
        ? { calls: [], next: null }
        : await pageToolCalls(d.sequelize, agentId, { limit: RECORDS_SHOWN, status, ...(after ? { after } : {}) });
    renderPage(
      res,
      200,
      ToolCallsPage({
        ctx: pageContext(req),
        agents,
        agentId,
        status: status ?? '',
        calls: page.calls,
        limit: RECORDS_SHOWN,
        next: page.next,
        older: after !== '',
      }),
    );
  });
  return router;
}
