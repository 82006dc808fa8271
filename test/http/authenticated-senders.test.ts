// With an authserv-id configured (SEMANTICS §7), a From address counts only when our own mail
// server stamped a pass for it: a forged header, a pass for another domain or no header at all
// leaves the run with no routing key, so only open gates admit it.
import { authenticatedSender } from '../../middleware/sender-check';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let sundae: number;

beforeAll(async () => {
  t = await createTestApp({ senderCheck: authenticatedSender('mx.thescoop.com') });
  const support = await makeToolkit(t, 'Support', ['lookup_order']);
  const finance = await makeToolkit(t, 'Finance', ['process_refund']);
  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [support] });
  await t
    .admin()
    .post(`/api/agents/${sundae}/toolkits`)
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
});

afterAll(() => t.close());

const refund = (sender: string, authentication_results?: string[]) =>
  t
    .client()
    .post(`/api/agents/${sundae}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: 'SCP-1050' }, sender, authentication_results });

describe('when a message claims to be from the shop', () => {
  test('then a dmarc=pass stamped by another server is ignored and the refund refused', async () => {
    const res = await refund('mara@thescoop.com', ['mx.evil.com; dmarc=pass header.from=thescoop.com']).expect(403);
    expect(res.body.code).toBe('tool_forbidden');
  });

  test('then no Authentication-Results at all gives no routing key: refused', async () => {
    await refund('mara@thescoop.com').expect(403);
  });

  test('then our own server failing DMARC is refused even with a pass elsewhere in the header', async () => {
    await refund('mara@thescoop.com', ['mx.thescoop.com; dmarc=fail header.from=thescoop.com; dmarc=pass header.from=thescoop.com']).expect(
      403,
    );
  });

  test('then a pass our server stamped for another domain does not count', async () => {
    await refund('mara@thescoop.com', ['mx.thescoop.com; spf=pass smtp.mailfrom=evil.com; dkim=pass header.d=evil.com']).expect(403);
  });

  test('then our own dmarc=pass for the From domain admits it', async () => {
    const res = await refund('Mara <mara+billing@thescoop.com>', [
      'mx.thescoop.com (our MX); dmarc=pass (p=reject) header.from=thescoop.com',
    ]).expect(200);
    expect(res.body.status).toBe('success');
    const calls = await t.admin().get(`/api/agents/${sundae}/tool-calls?limit=1`).expect(200);
    expect(calls.body[0]).toMatchObject({ status: 'success', routing_key: 'mara@thescoop.com' });
  });
});

describe('when the sender is not authenticated', () => {
  test('then open gates still admit the run, with no routing key recorded', async () => {
    await t
      .client()
      .post(`/api/agents/${sundae}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
      .expect(200);
    const calls = await t.admin().get(`/api/agents/${sundae}/tool-calls?limit=1`).expect(200);
    expect(calls.body[0]).toMatchObject({ tool_id: 'lookup_order', status: 'success', routing_key: null });
  });
});

describe('when a body carries more Authentication-Results than the sender check reads', () => {
  // docs/HTTP.md: at most 64 values of 16,384 characters each.
  test('then 64 values, one of 16,384 characters, are read, and a 65th value or a longer one is a 422', async () => {
    const other = 'mx.other.example; none';
    const longest = `${other} (${'x'.repeat(16_384 - other.length - 3)})`;
    expect(longest).toHaveLength(16_384);
    await refund('mara@thescoop.com', [longest, ...Array.from({ length: 63 }, () => other)]).expect(403);
    await refund(
      'mara@thescoop.com',
      Array.from({ length: 65 }, () => other),
    ).expect(422);
    await refund('mara@thescoop.com', [`${longest}x`]).expect(422);
  });
});
