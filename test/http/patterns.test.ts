// Gate patterns over HTTP: every rejection of SEMANTICS §4 is a 422 whose message says why, and
// accepted patterns are stored normalized.
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let agent: number;
let attachment: number;

beforeAll(async () => {
  t = await createTestApp();
  const toolkit = await makeToolkit(t, 'Finance', ['process_refund']);
  agent = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  attachment = (await t.admin().post(`/api/agents/${agent}/toolkits`).send({ toolkit_id: toolkit }).expect(201)).body.id;
});

afterAll(() => t.close());

const rejections: [string, string, RegExp][] = [
  ['an empty pattern', '', /empty/i],
  ['a second star', '*@*.thescoop.com', /one \*/i],
  ['no @', '*thescoop.com', /@/],
  ['a second @', 'a@b@thescoop.com', /@/],
  ['a +tag in the local part', 'mara+billing@thescoop.com', /tag/i],
  ['whitespace', 'mara @thescoop.com', /whitespace|space/i],
  ['a control character', 'mara\n@thescoop.com', /control/i],
  ['an empty local part', '@thescoop.com', /local part/i],
  ['an empty domain', 'mara@', /domain/i],
  ['an overlong pattern', `${'a'.repeat(320)}@x.com`, /long|320/i],
];

describe('when a rule pattern breaks SEMANTICS §4', () => {
  test.each(rejections)('then %s is answered 422 with a message saying why', async (_what, pattern, why) => {
    const res = await t.admin().post(`/api/agents/${agent}/toolkits/${attachment}/rules`).send({ kind: 'allow', pattern }).expect(422);
    expect(res.body.code).toBe('validation_error');
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'pattern'] })]);
    expect(res.body.detail[0].msg).toMatch(why);
  });

  test('then a bad pattern inside a rules list names its position, and nothing of the list is written', async () => {
    const res = await t
      .admin()
      .patch(`/api/agents/${agent}/toolkits/${attachment}`)
      .send({
        rules: [
          { kind: 'allow', pattern: '*@thescoop.com' },
          { kind: 'deny', pattern: '*thescoop.com' },
        ],
      })
      .expect(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'rules', 1, 'pattern']);
    const after = await t.admin().get(`/api/agents/${agent}/toolkits/${attachment}`).expect(200);
    expect(after.body.rules).toEqual([]);
  });

  test('then an unknown rule kind is a 422', async () => {
    const res = await t
      .admin()
      .post(`/api/agents/${agent}/toolkits/${attachment}/rules`)
      .send({ kind: 'maybe', pattern: 'a@b.com' })
      .expect(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'kind']);
  });
});

describe('when a rule pattern is valid', () => {
  test('then it is stored lowercased, with a punycode domain and no trailing dot', async () => {
    const res = await t
      .admin()
      .post(`/api/agents/${agent}/toolkits/${attachment}/rules`)
      .send({ kind: 'allow', pattern: 'Mara@Bücher.DE.' })
      .expect(201);
    expect(res.body).toMatchObject({ kind: 'allow', pattern: 'mara@xn--bcher-kva.de' });
  });

  test('then the same rule twice is a 409', async () => {
    await t.admin().post(`/api/agents/${agent}/toolkits/${attachment}/rules`).send({ kind: 'deny', pattern: '*@evil.com' }).expect(201);
    const res = await t
      .admin()
      .post(`/api/agents/${agent}/toolkits/${attachment}/rules`)
      .send({ kind: 'deny', pattern: '*@EVIL.com' })
      .expect(409);
    expect(res.body.code).toBe('conflict');
  });

  test('then a subdomain wildcard matches subdomains only', async () => {
    await t
      .admin()
      .patch(`/api/agents/${agent}/toolkits/${attachment}`)
      .send({ rules: [{ kind: 'allow', pattern: 'mara@*.thescoop.com' }] })
      .expect(200);
    const sub = await t.admin().get(`/api/agents/${agent}/tools`).query({ sender: 'mara@eu.thescoop.com' }).expect(200);
    const apex = await t.admin().get(`/api/agents/${agent}/tools`).query({ sender: 'mara@thescoop.com' }).expect(200);
    expect(sub.body.tools).toEqual(['process_refund']);
    expect(apex.body.tools).toEqual([]);
  });
});
