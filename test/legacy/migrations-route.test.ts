// POST /api/migrations/enabled-tools: admin only, a strict body, a dry run unless told otherwise,
// and a rolled-back apply answered with its report.
import type { Express } from 'express';
import request from 'supertest';
import { migrationsRoutes } from '../../routes/migrations';
import { mountRoutes } from '../../routes/route';
import { createApp } from '../../src/app/app';
import { createLogger } from '../../src/app/logger';
import { ADMIN_TOKEN, CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';
import { insertLegacyAgents } from './fixtures/legacy-database';
import { internalsOf } from '../../src/toolgate';

let t: TestApp;
let app: Express;
const URL = '/api/migrations/enabled-tools';
const asAdmin = () => request(app).post(URL).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

beforeAll(async () => {
  t = await createTestApp();
  app = createApp(t.tg, {
    logger: createLogger(false),
    extraApiRoutes: [mountRoutes(migrationsRoutes, internalsOf(t.tg), internalsOf(t.tg))],
  });
  await insertLegacyAgents(t.sequelize, [
    { name: 'Legacy triage', enabled_tools: 'email_analyzer, task_creator' },
    { name: 'Legacy typo', enabled_tools: 'Email_Analyzer' },
  ]);
});
afterAll(() => t.close());

describe('when someone other than an admin calls the migration route', () => {
  test('then no token is a 401 and a client token a 403', async () => {
    expect((await request(app).post(URL).send({}).expect(401)).body.code).toBe('unauthenticated');
    expect((await request(app).post(URL).set('Authorization', `Bearer ${CLIENT_TOKEN}`).send({}).expect(403)).body.code).toBe('forbidden');
  });
});

describe('when the body breaks the schema', () => {
  test('then an unknown field or a wrong type is a 422 naming it', async () => {
    const unknown = (await asAdmin().send({ dryrun: false }).expect(422)).body;
    expect(unknown).toMatchObject({
      code: 'validation_error',
      detail: [expect.objectContaining({ loc: ['body'], type: 'unrecognized_keys' })],
    });
    const wrongType = (await asAdmin().send({ dry_run: 'no' }).expect(422)).body;
    expect(wrongType.detail).toEqual([expect.objectContaining({ loc: ['body', 'dry_run'], type: 'invalid_type' })]);
  });
});

describe('when an admin calls it', () => {
  test('then an empty body is a dry run that plans the legacy agents and skips one created with Default Tools', async () => {
    await request(app).post('/api/agents').set('Authorization', `Bearer ${ADMIN_TOKEN}`).send({ name: 'New-style agent' }).expect(201);
    const report = (await asAdmin().expect(200)).body;
    expect(report).toMatchObject({ mode: 'dry_run', committed: false, map_typos: false, verification: { status: 'passed', over: 'plan' } });
    expect(report.skipped).toEqual([
      expect.objectContaining({
        agent_name: 'New-style agent',
        reason: 'operator_attachments',
        detail: expect.stringContaining('Default Tools [default]'),
      }),
    ]);
    expect(report.agents).toMatchObject({ read: 3, follow: 2, changed: 1, without_tools: 1 });
    expect(report.unmatched).toEqual([
      expect.objectContaining({ agent_name: 'Legacy typo', token: 'Email_Analyzer', suggestion: 'email_analyzer', mapped: false }),
    ]);
  });

  test('then dry_run false with map_typos applies, committed and verified', async () => {
    const report = (await asAdmin().send({ dry_run: false, map_typos: true }).expect(200)).body;
    expect(report).toMatchObject({
      mode: 'apply',
      committed: true,
      map_typos: true,
      changes: { attachments_created: 2 },
      verification: { status: 'passed', over: 'database' },
    });
    expect(report.unmatched).toEqual([expect.objectContaining({ token: 'Email_Analyzer', mapped: true })]);
  });

  test('then an apply the check refuses is a 409 parity_mismatch carrying the report, and nothing is committed', async () => {
    await insertLegacyAgents(t.sequelize, [{ name: 'Meddled', enabled_tools: 'document_search' }]);
    await t.sequelize.query(`
      CREATE FUNCTION meddle() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN UPDATE toolkits SET member_tool_ids = ARRAY['document_search', 'process_refund']::varchar(64)[] WHERE id = NEW.toolkit_id; RETURN NEW; END $$;
      CREATE TRIGGER meddle AFTER INSERT ON agent_toolkits FOR EACH ROW EXECUTE FUNCTION meddle();`);
    try {
      const body = (await asAdmin().send({ dry_run: false }).expect(409)).body;
      expect(body).toMatchObject({ code: 'parity_mismatch', report: { committed: false, verification: { status: 'failed' } } });
      expect(body.report.verification.mismatches).toContainEqual(
        expect.objectContaining({ tool_id: 'process_refund', legacy: false, new: true }),
      );
      const grants = (await request(app).get('/api/agents').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200)).body as {
        id: number;
        name: string;
      }[];
      const meddled = grants.find((a) => a.name === 'Meddled')!;
      expect(
        (await request(app).get(`/api/agents/${meddled.id}/toolkits`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200)).body,
      ).toEqual([]);
    } finally {
      await t.sequelize.query('DROP TRIGGER meddle ON agent_toolkits; DROP FUNCTION meddle();');
    }
  });
});
