// Issue 28's bounded-cost findings, each reproduced over HTTP and named by the behaviour that now
// holds (docs/SECURITY.md lists them; SEMANTICS §12b): input past a parsing bound is a 422
// input_too_complex naming the bound, before anything runs. test/security/event-loop.test.ts holds
// every route to the 50 ms the bounds are for.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';

let t: TestApp;
let sundae: Sundae;

beforeAll(async () => {
  t = await createTestApp();
  sundae = await createSundae(t, 'approval');
});
afterAll(() => t.close());

const toolCalls = async () =>
  (await t.sequelize.query<{ n: string }>('SELECT count(*)::text AS n FROM tool_calls', { type: QueryTypes.SELECT }))[0]!.n;

/** `[[[…]]]` `levels` deep, as the raw text a client sends. */
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe('finding 10: a deeply nested body', () => {
  test('when a 3,000-level body comes with an Idempotency-Key, then it is a 422 input_too_complex naming json_depth, not a 500', async () => {
    const before = await toolCalls();
    const res = await t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .set('Idempotency-Key', 'deep-1')
      .set('Content-Type', 'application/json')
      .send(`{"tool":"lookup_order","sender":"jane@acme.com","input":${nested(3000)}}`);
    expect({ status: res.status, code: res.body.code, bound: res.body.bound }).toEqual({
      status: 422,
      code: 'input_too_complex',
      bound: 'json_depth',
    });
    expect(res.body.loc.slice(0, 2)).toEqual(['body', 'input']);
    expect(await toolCalls()).toBe(before);
  });

  test('when the same body comes without a key, then it is the same 422', async () => {
    const res = await t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .set('Content-Type', 'application/json')
      .send(`{"tool":"lookup_order","sender":"jane@acme.com","input":${nested(3000)}}`);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 422, code: 'input_too_complex' });
  });
});
