// The listen mode trusts its cache only once notifications are seen to arrive: a connection that
// LISTENs but is never told anything (PgBouncer in transaction mode, any pooler or proxy that drops
// NotificationResponse) must leave the cache off. Here the listener's connection LISTENs on another
// database of the same server: LISTEN and its heartbeat succeed there, while a NOTIFY sent through
// the pool's database never reaches it, as behind such a pooler.
import { EventEmitter, once } from 'node:events';
import { compilePolicy } from '../../src/core/policy-index';
import { pg, type PgClient } from '../../src/db/connect';
import { DEFAULT_LISTENER_OPTIONS, PolicyListener } from '../../src/db/policy-listener';
import { ListenedPolicies, type Invalidation } from '../../src/run/listened-policies';
import type { CachedPolicy } from '../../src/run/policy-cache';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database';

/** The channel the policy tables' triggers NOTIFY on (migration 21), as the migrations spell it. */
const CHANNEL = 'toolgate_policy';

let db: TestDatabase;
let elsewhere: TestDatabase;
const opened: ListenedPolicies[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  elsewhere = await createEmptyDatabase();
});

afterAll(async () => {
  await Promise.all(opened.map((p) => p.close()));
  await elsewhere?.drop();
  await db?.drop();
});

const read = async (id: number): Promise<CachedPolicy> => ({
  agent: { id, name: `A${id}`, system_prompt: null, escalation_address: null },
  compiled: compilePolicy({ agent_id: id, attachments: [] }, new Set()),
  version: 1,
});

// Not a fresh literal at the call site, so it type-checks whatever options the listener knows.
const listenerOptions = {
  ...DEFAULT_LISTENER_OPTIONS,
  minBackoffMs: 50,
  maxBackoffMs: 200,
  heartbeatMs: 200,
  heartbeatTimeoutMs: 200,
  probeTimeoutMs: 500,
};

function policies(url: string, clients: PgClient[] = []): ListenedPolicies {
  const connect = () => {
    const client = new pg.Client({ connectionString: url });
    clients.push(client);
    return client;
  };
  const p = new ListenedPolicies(db.sequelize, read, connect, { maxAgents: 10, maxAgeMs: 0, listener: listenerOptions });
  opened.push(p);
  return p;
}

/** The first of listening or lost, or 'neither' after ms. */
function firstOf(p: ListenedPolicies, ms: number): Promise<{ event: 'listening' | 'lost' | 'neither'; err?: unknown }> {
  return Promise.race([
    once(p, 'listening').then(() => ({ event: 'listening' as const })),
    once(p, 'lost').then(([err]) => ({ event: 'lost' as const, err })),
    new Promise<{ event: 'neither' }>((resolve) => setTimeout(() => resolve({ event: 'neither' }), ms).unref()),
  ]);
}

const notify = (payload: string) =>
  db.sequelize.query('SELECT pg_notify(:channel, :payload)', { replacements: { channel: CHANNEL, payload } });

describe('when the listening connection is never told anything', () => {
  test('then the listener never reports listening, is lost with the likely cause named, and every run reads through', async () => {
    const p = policies(elsewhere.url);
    const heard: string[] = [];
    p.on('listening', () => heard.push('listening'));
    p.start();

    const first = await firstOf(p, 5_000);
    expect(first.event).toBe('lost');
    expect(first.err).toMatchObject({ code: 'ERR_TOOLGATE_NOTIFY_UNDELIVERED' });
    expect(String((first.err as Error).message)).toMatch(/transaction mode.*strict/s);
    expect(p.listenerState).not.toBe('listening');

    // It retries, and is lost again: the probe never comes back there.
    const again = await firstOf(p, 5_000);
    expect(again.event).toBe('lost');
    expect(heard).toEqual([]);
    expect((await p.get(1)).outcome).toBe('bypass');
    expect((await p.get(1)).outcome).toBe('bypass');
    expect(p.size).toBe(0);
  });
});

describe('when notifications do arrive', () => {
  test('then the listener reaches listening after its probe, a probe drops nothing, and a change still does', async () => {
    const p = policies(db.url);
    const invalidations: Invalidation[] = [];
    p.on('invalidated', (i: Invalidation) => invalidations.push(i));
    p.start();
    expect((await firstOf(p, 5_000)).event).toBe('listening');
    expect(p.listenerState).toBe('listening');

    expect((await p.get(1)).outcome).toBe('miss');
    expect((await p.get(1)).outcome).toBe('hit');
    // Another instance's probe, then a change: notifications arrive in commit order.
    const told = new Promise<void>((resolve) => p.on('invalidated', (i: Invalidation) => i.source === 'notification' && resolve()));
    await notify('probe:from-another-instance');
    await notify('2');
    await told;
    expect(invalidations.filter((i) => i.source !== 'listener_listening')).toEqual([{ source: 'notification', agentIds: [2] }]);
    expect((await p.get(1)).outcome).toBe('hit');
  });

  test("then a connection that stops being told later is caught by the heartbeat's probe, and the cache is off", async () => {
    const clients: PgClient[] = [];
    const p = policies(db.url, clients);
    p.start();
    expect((await firstOf(p, 5_000)).event).toBe('listening');
    await p.get(1);
    expect(p.size).toBe(1);

    // The connection still answers (SELECT 1 works), but hears nothing any more.
    await clients[0]!.query('UNLISTEN *');
    const next = await firstOf(p, 5_000);
    expect(next.event).toBe('lost');
    expect(next.err).toMatchObject({ code: 'ERR_TOOLGATE_NOTIFY_UNDELIVERED' });
    expect(p.size).toBe(0);
  });
});

describe("a notification's payload", () => {
  /** A listening connection that hears every notification sent, with no database behind it. */
  class HeardClient extends EventEmitter {
    async connect(): Promise<void> {}
    unref(): void {}
    async end(): Promise<void> {}
    async query<R>(text: string): Promise<{ rows: R[]; rowCount: number | null }> {
      return { rows: (text.includes('pg_backend_pid') ? [{ pid: 1 }] : []) as R[], rowCount: 0 };
    }
    tell(payload: string | undefined): void {
      this.emit('notification', { channel: CHANNEL, payload });
    }
  }

  test('then a probe is a probe, ids are agents, and anything else is everything', async () => {
    const client = new HeardClient();
    const changes: unknown[] = [];
    let listening!: () => void;
    const listens = new Promise<void>((resolve) => (listening = resolve));
    const listener = new PolicyListener(
      () => client,
      async (_channel, payload) => client.tell(payload),
      { onListening: () => listening(), onLost: () => undefined, onChange: (change) => changes.push(change) },
      { ...listenerOptions, heartbeatMs: 0 },
    );
    listener.start();
    await listens;

    for (const payload of ['probe:abc123', '12,57', '*', 'probe:', 'probe:a b', undefined]) client.tell(payload);
    await listener.close();
    // Another instance's probe changes nothing; a malformed one, or no payload, drops everything.
    expect(changes).toEqual([{ kind: 'agents', agentIds: [12, 57] }, { kind: 'all' }, { kind: 'all' }, { kind: 'all' }, { kind: 'all' }]);
  });
});
