// A host route calling its own tool as the README's example does (run.callTool(tool, input)): the
// output answered as the route's own JSON, a throwing tool answered with the host's own 502 and
// sentence while its words and error go to the host's log, and a 422 pointing at the field where
// each caller sent it: the top of a host route's body, `input` in a POST /tool-calls body.
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { currentRun } from '../../middleware/current-run';
import { senderAsGiven } from '../../middleware/sender-check';
import { createToolgate, type Toolgate } from '../../src/toolgate';
import { defineTool } from '../../src/tools/tool-registry';
import { ADMIN_TOKEN, CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';

class ParcelDatabaseError extends Error {}

const weighParcel = defineTool({
  id: 'weigh_parcel',
  display_name: 'Weigh parcel',
  summary: 'Weighs a parcel for its label.',
  input: z.object({ weight_kg: z.number().positive() }),
  execute: async ({ weight_kg }) => {
    if (weight_kg > 1000) throw new ParcelDatabaseError('secret-db-host:5432 refused');
    return { grams: weight_kg * 1000, label: weight_kg > 20 ? 'heavy' : 'standard' };
  },
});

let t: TestApp;
let tg: Toolgate;
let agent: number;
let app: express.Express;
const logged: unknown[] = [];

beforeAll(async () => {
  t = await createTestApp();
  tg = createToolgate({
    sequelize: t.sequelize,
    adminToken: ADMIN_TOKEN,
    clientTokens: [CLIENT_TOKEN],
    senderCheck: senderAsGiven,
    tools: [weighParcel],
  });
  const kit = await tg.toolkits.create({ name: 'Parcels', member_tool_ids: ['weigh_parcel'] });
  agent = (await tg.agents.create({ name: 'Packer', toolkit_ids: [kit.id] })).id;

  // The README's route, with this tool: the output on success, the host's own answer on failure.
  app = express();
  app.use('/api', tg.router);
  app.post('/parcels/:id/weigh', express.json(), tg.toolRun(), async (req, res) => {
    const weighed = await currentRun(req).callTool(weighParcel, { weight_kg: req.body.weight_kg });
    if (weighed.status === 'failure') {
      logged.push(weighed.thrown);
      res.status(502).json({ detail: 'The parcel could not be weighed. Try again later.' });
      return;
    }
    if (weighed.status === 'pending_approval') {
      res.status(202).json({ approval_request_id: weighed.request.id });
      return;
    }
    res.json(weighed.output);
  });
  app.use(tg.errorHandler());
});

afterAll(async () => {
  await tg.close();
  await t.close();
});

const weigh = (body: Record<string, unknown>) =>
  request(app)
    .post(`/parcels/${agent}/weigh`)
    .send({ from: 'packer@thescoop.com', ...body });

describe("when a host route calls its own tool by the tool's value", () => {
  test('then it answers the output itself, as the tool returned it', async () => {
    const res = await weigh({ weight_kg: 2.5 }).expect(200);
    expect(res.body).toEqual({ grams: 2500, label: 'standard' });
  });

  test("then a tool that throws is the host's 502 with its own sentence: the tool's words reach the log, never the client", async () => {
    const before = logged.length;
    const res = await weigh({ weight_kg: 5000 }).expect(502);
    expect(res.body).toEqual({ detail: 'The parcel could not be weighed. Try again later.' });
    expect(res.text).not.toContain('secret-db-host');
    expect(logged.slice(before)).toEqual([expect.any(ParcelDatabaseError)]);
    expect((logged.at(-1) as Error).message).toBe('secret-db-host:5432 refused');
  });

  test('then the failure is on record as such, with the words, for an operator', async () => {
    const records = (await request(app).get(`/api/agents/${agent}/tool-calls`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200))
      .body as { status: string; error: string | null }[];
    expect(records).toContainEqual(expect.objectContaining({ status: 'failure', error: 'secret-db-host:5432 refused' }));
  });
});

describe('when the input does not fit the tool', () => {
  test("then the host route's 422 points at the field at the top of its body, where its caller sent it", async () => {
    const res = await weigh({ weight_kg: 'heavy' }).expect(422);
    expect(res.body).toMatchObject({ code: 'validation_error', detail: [{ loc: ['body', 'weight_kg'] }] });
  });

  test('then a POST /tool-calls 422 points within its `input`, where that caller sent the field', async () => {
    const res = await request(app)
      .post(`/api/agents/${agent}/tool-calls`)
      .set('Authorization', `Bearer ${CLIENT_TOKEN}`)
      .send({ tool: 'weigh_parcel', input: { weight_kg: 'heavy' }, sender: 'packer@thescoop.com' })
      .expect(422);
    expect(res.body).toMatchObject({ code: 'validation_error', detail: [{ loc: ['body', 'input', 'weight_kg'] }] });
  });
});
