// Tasks filed from action items: idempotent per (agent, message, title), by message id or, without
// one, by a hash of the message, also when two connections race to file the same items.
import { createHash } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createSequelize } from '../../src/db/connect';
import { NotFoundError } from '../../src/errors';
import { taskSourceKey } from '../../src/tasks/source-key';
import { TaskStore } from '../../src/tasks/task-store';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;
let store: TaskStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new TaskStore(db.sequelize);
});
afterAll(() => db.drop());

async function createAgent(name: string): Promise<number> {
  const [row] = await db.sequelize.query<{ id: number }>('INSERT INTO agents (name) VALUES (:name) RETURNING id', {
    replacements: { name },
    type: QueryTypes.SELECT,
  });
  return row!.id;
}

async function rowCount(agentId: number): Promise<number> {
  const [row] = await db.sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM tasks WHERE agent_id = :agentId', {
    replacements: { agentId },
    type: QueryTypes.SELECT,
  });
  return row!.n;
}

const message = (id?: string) => ({
  message_id: id,
  from: 'jane@acme.com',
  subject: 'Order SCP-1042',
  body: 'It arrived melted. Please refund it by Friday, and send the new menu.',
});
const ITEMS = [{ title: 'Refund order SCP-1042', due: 'Friday' }, { title: 'Send the new menu' }];

describe('filing tasks', () => {
  it('when action items are filed, then each becomes a pending task in the HTTP shape, in item order', async () => {
    const agent = await createAgent('Sundae');
    const tasks = await store.createTasksFromActionItems(agent, ITEMS, message('<m1@acme.com>'));
    expect(tasks).toEqual([
      {
        id: expect.any(Number),
        agent_id: agent,
        title: 'Refund order SCP-1042',
        status: 'pending',
        due: 'Friday',
        source_message_id: '<m1@acme.com>',
        created_at: expect.any(String),
      },
      {
        id: expect.any(Number),
        agent_id: agent,
        title: 'Send the new menu',
        status: 'pending',
        due: null,
        source_message_id: '<m1@acme.com>',
        created_at: expect.any(String),
      },
    ]);
    expect(await store.listTasks(agent)).toEqual(tasks);
  });

  it('when the same items are filed again for the same message, then the same rows come back and nothing is duplicated', async () => {
    const agent = await createAgent('Sundae');
    const first = await store.createTasksFromActionItems(agent, ITEMS, message('<m2@acme.com>'));
    const again = await store.createTasksFromActionItems(agent, [...ITEMS].reverse(), message('<m2@acme.com>'));
    expect(again).toEqual([...first].reverse());
    expect(await rowCount(agent)).toBe(2);
  });

  it('when a retry adds an item, then only the new item is filed and the old rows come back unchanged', async () => {
    const agent = await createAgent('Sundae');
    const [refund] = await store.createTasksFromActionItems(agent, [ITEMS[0]!], message('<m3@acme.com>'));
    const tasks = await store.createTasksFromActionItems(
      agent,
      [{ title: 'Refund order SCP-1042', due: 'Monday' }, ITEMS[1]!],
      message('<m3@acme.com>'),
    );
    expect(tasks[0]).toEqual(refund);
    expect(tasks[1]!.title).toBe('Send the new menu');
    expect(await rowCount(agent)).toBe(2);
  });

  it('when the same items come from another message, then they are new tasks', async () => {
    const agent = await createAgent('Sundae');
    await store.createTasksFromActionItems(agent, ITEMS, message('<m4@acme.com>'));
    await store.createTasksFromActionItems(agent, ITEMS, message('<m5@acme.com>'));
    expect(await rowCount(agent)).toBe(4);
  });

  it('when the same message is filed for another agent, then that agent gets its own tasks', async () => {
    const [a, b] = [await createAgent('Sundae'), await createAgent('Scout')];
    await store.createTasksFromActionItems(a, ITEMS, message('<m6@acme.com>'));
    const tasks = await store.createTasksFromActionItems(b, ITEMS, message('<m6@acme.com>'));
    expect(tasks.map((t) => t.agent_id)).toEqual([b, b]);
    expect(await rowCount(a)).toBe(2);
    expect(await store.listTasks(a)).not.toEqual(expect.arrayContaining([expect.objectContaining({ agent_id: b })]));
  });

  it('when items repeat a title, or differ only in spacing, then one task is filed for it', async () => {
    const agent = await createAgent('Sundae');
    const tasks = await store.createTasksFromActionItems(
      agent,
      [{ title: 'Send  the new menu ' }, { title: '\tSend the new\nmenu' }, { title: 'Call Jane' }],
      message('<m7@acme.com>'),
    );
    expect(tasks.map((t) => t.title)).toEqual(['Send the new menu', 'Call Jane']);
    expect(await rowCount(agent)).toBe(2);
  });

  it('when an item has a blank title, then it files nothing; with no items, nothing is filed', async () => {
    const agent = await createAgent('Sundae');
    expect(await store.createTasksFromActionItems(agent, [{ title: '  ' }, { title: '\u0000' }], message('<m8@acme.com>'))).toEqual([]);
    expect(await store.createTasksFromActionItems(agent, [], message('<m8@acme.com>'))).toEqual([]);
    expect(await rowCount(agent)).toBe(0);
  });

  it('when a title is very long, then it is cut to 200 characters', async () => {
    const agent = await createAgent('Sundae');
    const [task] = await store.createTasksFromActionItems(agent, [{ title: 'é'.repeat(300) }], message('<m9@acme.com>'));
    expect(task!.title).toBe('é'.repeat(200));
  });

  it('when the agent does not exist, then filing is a 404', async () => {
    await expect(store.createTasksFromActionItems(999_999, ITEMS, message('<m10@acme.com>'))).rejects.toBeInstanceOf(NotFoundError);
  });

  it('when filing runs inside a caller transaction that rolls back, then no task remains', async () => {
    const agent = await createAgent('Sundae');
    await expect(
      db.sequelize.transaction(async (transaction) => {
        expect(await store.createTasksFromActionItems(agent, ITEMS, message('<m11@acme.com>'), transaction)).toHaveLength(2);
        throw new Error('workflow failed later');
      }),
    ).rejects.toThrow('workflow failed later');
    expect(await rowCount(agent)).toBe(0);
  });
});

describe('a message without a message id', () => {
  it('when it is filed twice, then its content hash keys it and nothing is duplicated', async () => {
    const agent = await createAgent('Sundae');
    const first = await store.createTasksFromActionItems(agent, ITEMS, message());
    const again = await store.createTasksFromActionItems(agent, ITEMS, { ...message(), message_id: '  ' });
    expect(again).toEqual(first);
    expect(first[0]!.source_message_id).toBeNull();
    expect(await rowCount(agent)).toBe(2);
  });

  it('when the key is stored, then it is sha256:<hex> of [from, subject, body]', async () => {
    const agent = await createAgent('Sundae');
    await store.createTasksFromActionItems(agent, ITEMS, message());
    const expected = `sha256:${createHash('sha256')
      .update(JSON.stringify(['jane@acme.com', 'Order SCP-1042', message().body]))
      .digest('hex')}`;
    const rows = await db.sequelize.query<{ source_key: string }>('SELECT DISTINCT source_key FROM tasks WHERE agent_id = :agent', {
      replacements: { agent },
      type: QueryTypes.SELECT,
    });
    expect(rows).toEqual([{ source_key: expected }]);
  });

  it('when two messages differ in sender, subject or body, then they file separate tasks', async () => {
    const agent = await createAgent('Sundae');
    await store.createTasksFromActionItems(agent, ITEMS, message());
    await store.createTasksFromActionItems(agent, ITEMS, { ...message(), from: 'mara@thescoop.com' });
    await store.createTasksFromActionItems(agent, ITEMS, { ...message(), subject: 'Re: Order SCP-1042' });
    await store.createTasksFromActionItems(agent, ITEMS, { ...message(), body: 'Different words.' });
    expect(await rowCount(agent)).toBe(8);
  });

  it('when fields would run together, then the keys still differ', () => {
    const a = taskSourceKey({ from: 'a', subject: 'bc', body: 'd' });
    const b = taskSourceKey({ from: 'ab', subject: 'c', body: 'd' });
    expect(a).not.toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('when a message id is over 998 bytes, then it is hashed rather than stored as the key', () => {
    const long = `<${'x'.repeat(1200)}@acme.com>`;
    expect(taskSourceKey({ message_id: long, from: 'a', body: 'b' })).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(taskSourceKey({ message_id: ' <m@acme.com> ', from: 'a', body: 'b' })).toBe('<m@acme.com>');
  });
});

describe('concurrent filing', () => {
  it('when two connections file the same items at once, then both get the same rows and nothing is duplicated', async () => {
    const agent = await createAgent('Sundae');
    const other = createSequelize(db.url);
    try {
      const items = Array.from({ length: 20 }, (_, i) => ({ title: `Item ${i}` }));
      for (const source of [message('<race@acme.com>'), message()]) {
        const [a, b] = await Promise.all([
          store.createTasksFromActionItems(agent, items, source),
          new TaskStore(other).createTasksFromActionItems(agent, [...items].reverse(), source),
        ]);
        expect(a.map((t) => t.id)).toEqual([...b].reverse().map((t) => t.id));
        expect(a).toHaveLength(20);
      }
      expect(await rowCount(agent)).toBe(40);
    } finally {
      await other.close();
    }
  });

  it('when two transactions file the same items and the first commits late, then the second waits and returns its rows', async () => {
    const agent = await createAgent('Sundae');
    const other = createSequelize(db.url);
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let firstIds: number[] = [];
      const first = db.sequelize.transaction(async (transaction) => {
        firstIds = (await store.createTasksFromActionItems(agent, ITEMS, message('<late@acme.com>'), transaction)).map((t) => t.id);
        await held;
      });
      while (firstIds.length === 0) await new Promise((r) => setTimeout(r, 5));
      const second = new TaskStore(other).createTasksFromActionItems(agent, ITEMS, message('<late@acme.com>'));
      await new Promise((r) => setTimeout(r, 50));
      release();
      await first;
      expect((await second).map((t) => t.id)).toEqual(firstIds);
      expect(await rowCount(agent)).toBe(2);
    } finally {
      await other.close();
    }
  });
});

describe('listing tasks', () => {
  it('when an agent lists its tasks, then it sees its own, oldest first', async () => {
    const agent = await createAgent('Sundae');
    const a = await store.createTasksFromActionItems(agent, [{ title: 'First' }], message('<l1@acme.com>'));
    const b = await store.createTasksFromActionItems(agent, [{ title: 'Second' }], message('<l2@acme.com>'));
    expect(await store.listTasks(agent)).toEqual([...a, ...b]);
  });

  it('when an agent has no tasks, then the list is empty', async () => {
    expect(await store.listTasks(await createAgent('Idle'))).toEqual([]);
  });
});
