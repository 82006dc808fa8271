// Toolkits: the list, New toolkit, edit, and delete (after a confirmation that names the agents
// that lose the grant). Editing a toolkit has a Preview beside Save (SEMANTICS §15): what the new
// members would change for each agent that holds it, saved or not.
import { Router, type Request, type Response } from 'express';
import { ConflictError } from '../../../errors';
import { parse, pathId } from '../../../http/parse';
import { toolkitInputSchema, toolkitPatchSchema } from '../../../services/toolkits';
import { previewForm, previewing, unreplayed } from '../form-preview';
import type { DashboardServices } from '../dashboard-services';
import { attempt, listField, pageContext, redirectWith, textField } from '../form-data';
import { renderPage } from '../render';
import { agentsHolding, attachmentCounts, holderCount } from '../usage';
import type { FieldErrors } from '../views/form';
import type { FormPreview } from '../views/policy-preview';
import { ToolkitFormPage, type ToolkitFormValues } from '../views/toolkit-form';
import type { McpToolStates } from '../views/toolkits';
import { DeleteToolkitPage, ToolkitsPage } from '../views/toolkits';

export function toolkitPages(d: DashboardServices): Router {
  const router = Router();
  const tools = () => d.registry.manifest.list();
  const mcpTools = (): McpToolStates =>
    new Map(d.mcp.servers().flatMap(({ name }) => d.mcp.pinned(name).map((t) => [t.tool_id, { status: t.status, server: name }] as const)));

  const showForm = (
    req: Request,
    res: Response,
    status: number,
    values: ToolkitFormValues,
    errors: FieldErrors,
    toolkit?: Awaited<ReturnType<typeof d.toolkits.get>>,
    preview?: FormPreview,
  ) =>
    renderPage(
      res,
      status,
      ToolkitFormPage({ ctx: pageContext(req), tools: tools(), mcpTools: mcpTools(), values, errors, toolkit, preview }),
    );

  const submitted = (req: Request): ToolkitFormValues => ({
    name: textField(req, 'name'),
    description: textField(req, 'description'),
    members: listField(req, 'member'),
  });

  router.get('/toolkits', async (req, res) => {
    const [toolkits, usage] = await Promise.all([d.toolkits.list(), attachmentCounts(d.sequelize)]);
    renderPage(res, 200, ToolkitsPage({ ctx: pageContext(req), toolkits, tools: tools(), mcpTools: mcpTools(), usage }));
  });

  router.get('/toolkits/new', (req, res) => {
    showForm(req, res, 200, { name: '', description: '', members: [] }, {});
  });

  router.post('/toolkits', async (req, res) => {
    const values = submitted(req);
    // A new toolkit is held by no agent: checked as Save checks it, and nothing to replay.
    if (previewing(req)) {
      const check = () =>
        parse(toolkitInputSchema, { name: values.name, description: values.description, member_tool_ids: values.members }, 'body');
      const previewed = await unreplayed(check, 'no_agent', 'name');
      if (!previewed.ok) return showForm(req, res, previewed.status, values, previewed.errors);
      return showForm(req, res, 200, values, {}, undefined, previewed.preview);
    }
    const result = await attempt(
      () => d.toolkits.create({ name: values.name, description: values.description, member_tool_ids: values.members }),
      'name',
    );
    if (!result.ok) return showForm(req, res, result.status, values, result.errors);
    await redirectWith(req, res, '/toolkits', `Toolkit ${result.value.name} created. Attach it to an agent from the agent's page.`);
  });

  router.get('/toolkits/:toolkitId', async (req, res) => {
    const toolkit = await d.toolkits.get(pathId(req.params, 'toolkitId'));
    showForm(req, res, 200, { name: toolkit.name, description: toolkit.description, members: toolkit.member_tool_ids }, {}, toolkit);
  });

  router.post('/toolkits/:toolkitId', async (req, res) => {
    const toolkit = await d.toolkits.get(pathId(req.params, 'toolkitId'));
    const values = submitted(req);
    // All Tools' members are the manifest's: its checklist is not sent, and not changed.
    const patch = {
      name: values.name,
      description: values.description,
      ...(toolkit.system_key === 'all_tools' ? {} : { member_tool_ids: values.members }),
    };
    if (previewing(req)) {
      // Checked as Save checks it. A toolkit no agent holds changes no one's tools, and All Tools'
      // members are the manifest's whatever the form says: neither is replayed.
      const allTools = toolkit.system_key === 'all_tools';
      const change = () => {
        parse(toolkitPatchSchema, patch, 'body');
        return { toolkit: { toolkit_id: toolkit.id, member_tool_ids: values.members } };
      };
      const holders = allTools ? 0 : await holderCount(d.sequelize, toolkit.id);
      const previewed =
        holders > 0
          ? await previewForm(d, change, holders, 'member_tool_ids')
          : await unreplayed(change, allTools ? 'manifest' : 'no_agent', 'name');
      const shown = allTools ? { ...values, members: toolkit.member_tool_ids } : values;
      if (!previewed.ok) return showForm(req, res, previewed.status, shown, previewed.errors, toolkit);
      return showForm(req, res, 200, shown, {}, toolkit, previewed.preview);
    }
    const result = await attempt(() => d.toolkits.update(toolkit.id, patch), 'name');
    if (!result.ok)
      return showForm(
        req,
        res,
        result.status,
        toolkit.system_key === 'all_tools' ? { ...values, members: toolkit.member_tool_ids } : values,
        result.errors,
        toolkit,
      );
    await redirectWith(
      req,
      res,
      '/toolkits',
      `Toolkit ${result.value.name} saved. Agents that hold it have the change from their next run.`,
    );
  });

  router.get('/toolkits/:toolkitId/delete', async (req, res) => {
    const toolkit = await d.toolkits.get(pathId(req.params, 'toolkitId'));
    if (toolkit.system_key)
      throw new ConflictError(`${toolkit.name} is a system toolkit and cannot be deleted: detach it from agents instead.`);
    renderPage(res, 200, DeleteToolkitPage({ ctx: pageContext(req), toolkit, agents: await agentsHolding(d.sequelize, toolkit.id) }));
  });

  router.post('/toolkits/:toolkitId/delete', async (req, res) => {
    const toolkit = await d.toolkits.get(pathId(req.params, 'toolkitId'));
    await d.toolkits.delete(toolkit.id);
    await redirectWith(req, res, '/toolkits', `Toolkit ${toolkit.name} deleted.`);
  });
  return router;
}
