// The Scoop's Sundae, as the seed document grants her, built through the admin API for a test:
// Support (lookup_order, check_flavor_stock) open to every sender, and Finance (process_refund) on
// one of two terms: behind the gate *@thescoop.com (the seed's scenario), or open to every sender
// with approval by *@thescoop.com (the approval variation). She copies the shop's owner when she
// passes a request on. Each call makes its own toolkits, so a test file may build several.
import type { TestApp } from './app';
import { makeToolkit, makeAgent } from './factories';

export type FinanceTerms = 'gate' | 'approval';

export interface Sundae {
  id: number;
  /** The Finance attachment's id. */
  finance: number;
}

let made = 0;

export async function createSundae(
  t: Pick<TestApp, 'admin'>,
  terms: FinanceTerms,
  options: { name?: string; escalation?: string | null } = {},
): Promise<Sundae> {
  made += 1;
  const toolkit = async (name: string, members: string[]) => await makeToolkit(t, `${name} ${made}`, members);
  const support = await toolkit('Support', ['lookup_order', 'check_flavor_stock']);
  const finance = await toolkit('Finance', ['process_refund']);
  const escalation = options.escalation === undefined ? 'mara@thescoop.com' : options.escalation;
  const id = await makeAgent(t, { name: options.name ?? 'Sundae', toolkit_ids: [support], escalation_address: escalation });
  const grant =
    terms === 'gate' ? { rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] } : { approval: { approvers: ['*@thescoop.com'] } };
  const attachment = (
    await t
      .admin()
      .post(`/api/agents/${id}/toolkits`)
      .send({ toolkit_id: finance, ...grant })
      .expect(201)
  ).body.id as number;
  return { id, finance: attachment };
}
