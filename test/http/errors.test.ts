// The error contract of HTTP.md: JSON {detail, code}, the right status for each mistake, never a
// stack trace, and tokens checked per role.
import request from 'supertest';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ bodyLimit: '2kb' });
});

afterAll(() => t.close());

describe('when the caller has no or a wrong token', () => {
  test('then an admin route answers 401 unauthenticated with a Bearer challenge', async () => {
    const res = await request(t.app).get('/api/toolkits').expect(401);
    expect(res.body.code).toBe('unauthenticated');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  test('then a wrong token is 401 even on a client route', async () => {
    const res = await request(t.app).get('/api/agents').set('Authorization', 'Bearer nope-nope-nope-nope').expect(401);
    expect(res.body.code).toBe('unauthenticated');
  });

  test('then a malformed Authorization header is 401', async () => {
    await request(t.app).get('/api/toolkits').set('Authorization', 'Basic abc').expect(401);
  });
});

describe('when a token of the wrong role calls', () => {
  test('then a client token on an admin route answers 403 forbidden', async () => {
    const res = await t.client().get('/api/toolkits').expect(403);
    expect(res.body).toMatchObject({ code: 'forbidden' });
    expect(res.body.detail).toMatch(/admin/);
  });

  test('then the scheduler token cannot create agents', async () => {
    await t.scheduler().post('/api/agents').send({ name: 'x' }).expect(403);
  });
});

describe('when the body is not what the route reads', () => {
  test('then malformed JSON is 400 invalid_json', async () => {
    const res = await t.admin().post('/api/toolkits').set('Content-Type', 'application/json').send('{"name": ').expect(400);
    expect(res.body.code).toBe('invalid_json');
  });

  test('then a body over the limit is 413 payload_too_large', async () => {
    const res = await t
      .admin()
      .post('/api/toolkits')
      .send({ name: 'x'.repeat(5000), member_tool_ids: [] })
      .expect(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  test('then a missing body is a 422 listing what is missing', async () => {
    const res = await t.admin().post('/api/toolkits').expect(422);
    expect(res.body.code).toBe('validation_error');
    expect(Array.isArray(res.body.detail)).toBe(true);
  });

  test('then an array where a string belongs is a 422 with its location', async () => {
    const res = await t
      .admin()
      .post('/api/toolkits')
      .send({ name: ['a'], member_tool_ids: [] })
      .expect(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'name'] });
  });

  test('then an unknown field is a 422 rather than silently ignored', async () => {
    const res = await t.admin().post('/api/toolkits').send({ name: 'a', member_tool_ids: [], members: [] }).expect(422);
    expect(res.body.code).toBe('validation_error');
  });

  test('then a non-numeric id in the path is a 422, not a 500', async () => {
    const res = await t.admin().get('/api/toolkits/abc').expect(422);
    expect(res.body.detail[0].loc[0]).toBe('path');
  });

  test('then a canonical id beyond PostgreSQL integers is a 404, not a 500: it names no row', async () => {
    await t.admin().get('/api/agents/99999999999').expect(404);
  });

  test('then an id of over 16 digits is a 422: it is not an id at all', async () => {
    await t.admin().get('/api/agents/12345678901234567').expect(422);
  });
});

describe('when the route does not exist', () => {
  test('then the answer is a JSON 404', async () => {
    const res = await request(t.app).get('/api/nope').expect(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('when any error is rendered', () => {
  test('then it carries a request id and no stack trace', async () => {
    const res = await request(t.app).get('/api/toolkits').set('X-Request-Id', 'req-123').expect(401);
    expect(res.body.request_id).toBe('req-123');
    expect(res.headers['x-request-id']).toBe('req-123');
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe('when the service is probed', () => {
  test('then /healthz and /readyz answer ok once migrated', async () => {
    await request(t.app).get('/healthz').expect(200, { status: 'ok' });
    await request(t.app).get('/readyz').expect(200, { status: 'ready' });
  });

  test('then helmet sets its headers', async () => {
    const res = await request(t.app).get('/healthz');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});
