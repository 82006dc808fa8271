// Toolkits (admin): list, create, read, update, delete, and the system-toolkit sync.
import { Router } from 'express';
import { z } from 'zod';
import { parse, pathId } from '../src/http/parse';
import { name, text } from '../src/http/schemas';
import type { Toolgate } from '../src/toolgate';

const toolkitBody = z.strictObject({
  name: name(200),
  description: text(2000).optional(),
  // Any string here: the service checks it against the manifest and suggests what was meant.
  member_tool_ids: z.array(text(64).min(1)).max(500, 'at most 500 members'),
});

export function toolkitsRouter(tg: Toolgate): Router {
  const router = Router();
  router.use('/toolkits', tg.requireRole('admin'));

  router.get('/toolkits', async (_req, res) => {
    res.json(await tg.toolkits.list());
  });

  router.post('/toolkits/sync', async (_req, res) => {
    const report = await tg.syncSystemToolkits();
    res.json(report);
  });

  router.post('/toolkits', async (req, res) => {
    const body = parse(toolkitBody, req.body, 'body');
    res.status(201).json(await tg.toolkits.create(body));
  });

  router.get('/toolkits/:toolkitId', async (req, res) => {
    res.json(await tg.toolkits.get(pathId(req.params, 'toolkitId')));
  });

  router.patch('/toolkits/:toolkitId', async (req, res) => {
    const id = pathId(req.params, 'toolkitId');
    const body = parse(toolkitBody.partial(), req.body, 'body');
    res.json(await tg.toolkits.update(id, body));
  });

  router.delete('/toolkits/:toolkitId', async (req, res) => {
    await tg.toolkits.delete(pathId(req.params, 'toolkitId'));
    res.status(204).end();
  });
  return router;
}
