// The Scoop's demo data (seed document's scenario): an ice-cream shop's orders, flavors, refunds
// and outbox, in tables of their own so the demo never touches toolgate's schema. Idempotent.
import type { Sequelize, Transaction } from 'sequelize';

const DEMO_TABLES = `
  CREATE TABLE IF NOT EXISTS scoop_orders (
    id text PRIMARY KEY, customer_email text NOT NULL, flavor text NOT NULL,
    amount_cents integer NOT NULL CHECK (amount_cents >= 0), status text NOT NULL);
  CREATE TABLE IF NOT EXISTS scoop_flavors (name text PRIMARY KEY, pints_in_stock integer NOT NULL);
  CREATE TABLE IF NOT EXISTS scoop_refunds (
    id serial PRIMARY KEY, order_id text NOT NULL REFERENCES scoop_orders(id), amount_cents integer NOT NULL,
    approved_by text, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS scoop_outbox (
    id serial PRIMARY KEY, recipient text NOT NULL, subject text NOT NULL, body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now());`;

const DEMO_ROWS = `
  INSERT INTO scoop_orders (id, customer_email, flavor, amount_cents, status) VALUES
    ('SCP-1042', 'jane@acme.com', 'Mint Chip', 1899, 'delivered'),
    ('SCP-1043', 'jane@acme.com', 'Salted Caramel', 1299, 'delivered'),
    ('SCP-1050', 'omar@example.org', 'Strawberry', 999, 'shipped')
  ON CONFLICT (id) DO NOTHING;
  INSERT INTO scoop_flavors (name, pints_in_stock) VALUES
    ('Mint Chip', 14), ('Salted Caramel', 3), ('Strawberry', 0), ('Vanilla Bean', 42)
  ON CONFLICT (name) DO NOTHING;`;

export async function ensureScoopData(sequelize: Sequelize, transaction?: Transaction): Promise<void> {
  await sequelize.query(DEMO_TABLES, { transaction });
  await sequelize.query(DEMO_ROWS, { transaction });
}

export async function dropScoopData(sequelize: Sequelize, transaction?: Transaction): Promise<void> {
  await sequelize.query('DROP TABLE IF EXISTS scoop_outbox, scoop_refunds, scoop_orders, scoop_flavors', { transaction });
}
