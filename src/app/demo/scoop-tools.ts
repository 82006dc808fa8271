// The Scoop's host tools: small implementations over the demo tables, registered beside the
// builtins so the seed's scenario can be replayed against a running service.
import { QueryTypes } from 'sequelize';
import { z } from 'zod';
import { defineTool, type HostTool } from '../../tools/tool-registry';

const orderId = z.string().regex(/^SCP-\d{1,8}$/, 'an order id looks like SCP-1042');

export const lookupOrder = defineTool({
  id: 'lookup_order',
  display_name: 'Look up order',
  summary: 'Finds an order by its id and tells its flavor, amount and status.',
  input: z.strictObject({ order_id: orderId }),
  async execute({ order_id }, { sequelize }) {
    const [order] = await sequelize.query('SELECT id, flavor, amount_cents, status FROM scoop_orders WHERE id = :order_id', {
      replacements: { order_id },
      type: QueryTypes.SELECT,
    });
    return order ?? { found: false, order_id };
  },
});

export const checkFlavorStock = defineTool({
  id: 'check_flavor_stock',
  display_name: 'Check flavor stock',
  summary: 'Tells how many pints of each flavor (or of one) are in stock.',
  input: z.strictObject({ flavor: z.string().min(1).max(100).optional() }).optional(),
  async execute(input, { sequelize }) {
    const flavors = await sequelize.query<{ name: string; pints_in_stock: number }>(
      'SELECT name, pints_in_stock FROM scoop_flavors WHERE :flavor::text IS NULL OR lower(name) = lower(:flavor) ORDER BY name',
      { replacements: { flavor: input?.flavor ?? null }, type: QueryTypes.SELECT },
    );
    return { flavors };
  },
});

export const processRefund = defineTool({
  id: 'process_refund',
  display_name: 'Process refund',
  summary: 'Refunds an order in full and marks it refunded.',
  input: z.strictObject({ order_id: orderId }),
  // An approved request runs on the requester's behalf: the refund names who approved it.
  async execute({ order_id }, { sequelize, routing_key, approval }) {
    const approvedBy = approval?.approved_by ?? routing_key;
    return sequelize.transaction(async (transaction) => {
      const [order] = await sequelize.query<{ amount_cents: number; status: string }>(
        'SELECT amount_cents, status FROM scoop_orders WHERE id = :order_id FOR UPDATE',
        { replacements: { order_id }, type: QueryTypes.SELECT, transaction },
      );
      if (!order) throw new Error(`no order ${order_id}`);
      if (order.status === 'refunded') return { order_id, refunded: false, reason: 'already refunded' };
      await sequelize.query(
        `INSERT INTO scoop_refunds (order_id, amount_cents, approved_by) VALUES (:order_id, :amount, :by);
         UPDATE scoop_orders SET status = 'refunded' WHERE id = :order_id;`,
        { replacements: { order_id, amount: order.amount_cents, by: approvedBy }, transaction },
      );
      return { order_id, refunded: true, amount_cents: order.amount_cents };
    });
  },
});

export const sendEmail = defineTool({
  id: 'send_email',
  display_name: 'Send email',
  summary: 'Queues an email in the demo outbox (nothing leaves the machine).',
  input: z.strictObject({ to: z.string().min(3).max(320), subject: z.string().max(200), body: z.string().max(20_000) }),
  async execute({ to, subject, body }, { sequelize }) {
    await sequelize.query('INSERT INTO scoop_outbox (recipient, subject, body) VALUES (:to, :subject, :body)', {
      replacements: { to, subject, body },
    });
    return { queued: true, to };
  },
});

export const SCOOP_TOOLS: readonly HostTool[] = [lookupOrder, checkFlavorStock, processRefund, sendEmail];
