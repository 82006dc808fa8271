// run.callTool() given the host's own defineTool() value: the same dispatch path as by id (refused
// and recorded first when not offered, the input checked, the records written), the value checked
// to be the registered one, a throwing tool's error kept whole for the host, and a 422 pointing
// where the caller read the input.
import { z } from 'zod';
import { ToolForbiddenError, ToolgateConfigError, ValidationError } from '../../src/errors';
import { defineTool } from '../../src/tools/tool-registry';
import { attachment, fakes, runOf } from '../support/fake-run';

class OrderDatabaseDown extends Error {}

const lookupOrder = defineTool({
  id: 'lookup_order',
  display_name: 'Look up order',
  summary: 'Finds an order.',
  input: z.object({ order_id: z.string().min(1) }),
  execute: async ({ order_id }) => {
    if (order_id === 'SCP-0') throw new OrderDatabaseDown('secret-db-host:5432 refused');
    return { order_id, status: 'delivered' as const };
  },
});

/** A run offered lookup_order, whose registry holds exactly the value above. */
function offered() {
  const { deps, events } = fakes({ implementation: (id) => (id === lookupOrder.id ? lookupOrder : undefined) });
  return { run: runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps), events };
}

describe('when a host calls a tool by its defineTool() value', () => {
  test('then it runs through dispatch, recorded, and the outcome holds what the tool returned', async () => {
    const { run, events } = offered();
    const outcome = await run.callTool(lookupOrder, { order_id: 'SCP-1042' });
    expect(outcome).toEqual({ status: 'success', output: { order_id: 'SCP-1042', status: 'delivered' } });
    expect(events.map((e) => e.kind)).toEqual(['start', 'complete']);
  });

  test('then a tool that throws is a failure holding the thrown error itself, for the host to log and answer in its own words', async () => {
    const { run, events } = offered();
    const outcome = await run.callTool(lookupOrder, { order_id: 'SCP-0' });
    expect(outcome.status).toBe('failure');
    if (outcome.status !== 'failure') return;
    expect(outcome.thrown).toBeInstanceOf(OrderDatabaseDown);
    expect(outcome.error).toBe('secret-db-host:5432 refused');
    expect(events.at(-1)!.detail).toMatchObject({ status: 'failure' });
  });

  test('then a tool the run is not offered is refused and recorded before anything else is looked at', async () => {
    const { deps, events } = fakes({ implementation: () => undefined });
    const run = runOf({ attachments: [attachment(1, ['issue_refund'])] }, deps);
    await expect(run.callTool(lookupOrder, { order_id: 'SCP-1042' })).rejects.toBeInstanceOf(ToolForbiddenError);
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'lookup_order', status: 'denied' } }]);
  });

  test('then a value that is not the registered one under its id is a loud misconfiguration, and nothing is written or run', async () => {
    const { run, events } = offered();
    const copy = { ...lookupOrder, execute: async () => ({ order_id: 'forged', status: 'delivered' as const }) };
    const call = run.callTool(copy, { order_id: 'SCP-1042' });
    await expect(call).rejects.toBeInstanceOf(ToolgateConfigError);
    await expect(call).rejects.toMatchObject({ code: 'ERR_TOOLGATE_TOOL_NOT_REGISTERED' });
    expect(events).toEqual([]);
  });
});

describe('when the input does not fit the tool', () => {
  const loc = async (call: Promise<unknown>) => {
    await expect(call).rejects.toBeInstanceOf(ValidationError);
    return ((await call.catch((err: unknown) => err)) as ValidationError).issues.map((i) => i.loc);
  };

  test("then by default the 422 points at the field at the top of the body, where a host route's caller sent it", async () => {
    const { run, events } = offered();
    expect(await loc(run.callTool(lookupOrder, { order_id: '' }))).toEqual([['body', 'order_id']]);
    expect(await loc(run.callTool('lookup_order', {}))).toEqual([['body', 'order_id']]);
    expect(events).toEqual([]);
  });

  test('then a caller that read the input from within the body says where, and the 422 points there', async () => {
    const { run } = offered();
    expect(await loc(run.callTool(lookupOrder, { order_id: '' }, { inputAt: ['body', 'input'] }))).toEqual([['body', 'input', 'order_id']]);
    expect(await loc(run.callTool('lookup_order', { order_id: 7 }, { inputAt: ['body', 'parcel'] }))).toEqual([
      ['body', 'parcel', 'order_id'],
    ]);
  });
});
