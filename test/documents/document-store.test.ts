// The document store: upload in one transaction, list, read and delete, all scoped to the agent.
import { QueryTypes } from 'sequelize';
import { chunkText } from '../../src/documents/chunker';
import { DocumentStore } from '../../src/documents/document-store';
import { NotFoundError } from '../../src/errors';
import { loadCorpus } from '../fixtures/corpus/load';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { createAgent } from './support';

let db: TestDatabase;
let store: DocumentStore;
let sundae: number;
let scout: number;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.sequelize);
  sundae = await createAgent(db.sequelize, 'Sundae');
  scout = await createAgent(db.sequelize, 'Scout');
});
afterAll(() => db.drop());

async function chunkRows(documentId: number): Promise<{ chunk_index: number; content: string; agent_id: number }[]> {
  return db.sequelize.query(
    'SELECT chunk_index, content, agent_id FROM document_chunks WHERE document_id = :documentId ORDER BY chunk_index',
    {
      replacements: { documentId },
      type: QueryTypes.SELECT,
    },
  );
}

const franchise = loadCorpus().find((d) => d.slug === 'franchise-guide')!;

describe('upload', () => {
  it('when a document is uploaded, then it is stored with its chunks and reported as {id, title, chunk_count, created_at}', async () => {
    const doc = await store.add(sundae, { title: franchise.title, content: franchise.content });
    const expected = await chunkText(franchise.content);
    expect(doc).toEqual({ id: expect.any(Number), title: 'Franchise Guide', chunk_count: expected.length, created_at: expect.any(String) });
    expect(new Date(doc.created_at!).getTime()).not.toBeNaN();
    expect(await chunkRows(doc.id)).toEqual(expected.map((c) => ({ chunk_index: c.index, content: c.content, agent_id: sundae })));
  });

  it('when the agent does not exist, then the upload is a 404 and stores nothing', async () => {
    const before = await db.sequelize.query('SELECT count(*)::int AS n FROM documents', { type: QueryTypes.SELECT });
    const err = await store.add(999_999, { title: 'Ghost', content: 'Nobody owns this.' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    expect(await db.sequelize.query('SELECT count(*)::int AS n FROM documents', { type: QueryTypes.SELECT })).toEqual(before);
  });

  it('when the chunks cannot be stored, then the document is not stored either (one transaction)', async () => {
    const count = () => db.sequelize.query('SELECT count(*)::int AS n FROM documents', { type: QueryTypes.SELECT });
    const before = await count();
    // A constraint only this test has: the document row goes in, its chunk is refused after it.
    await db.sequelize.query(`ALTER TABLE document_chunks ADD CONSTRAINT test_no_boom CHECK (content NOT LIKE '%BOOM%')`);
    try {
      await expect(store.add(sundae, { title: 'Broken', content: 'Fine sentence. BOOM.' })).rejects.toThrow(/test_no_boom/);
    } finally {
      await db.sequelize.query('ALTER TABLE document_chunks DROP CONSTRAINT test_no_boom');
    }
    expect(await count()).toEqual(before);
  });
});

describe('list and get', () => {
  it('when an agent lists its documents, then it sees its own, oldest first, and no other agent sees them', async () => {
    const a = await store.add(scout, { title: 'Stock report', content: 'Mango sorbet is low. Order more mangoes.' });
    const b = await store.add(scout, { title: 'Rota', content: 'Mara opens on Mondays.' });
    const list = await store.list(scout);
    expect(list).toEqual([a, b]);
    expect((await store.list(sundae)).map((d) => d.id)).not.toContain(a.id);
  });

  it('when a document is read by its agent, then it is returned; by another agent, then it is a 404', async () => {
    const doc = await store.add(scout, { title: 'Opening checklist', content: 'Unlock the door. Check the freezer log.' });
    expect(await store.get(scout, doc.id)).toEqual(doc);
    await expect(store.get(sundae, doc.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('when a document id does not exist or cannot exist, then reading it is a 404', async () => {
    for (const id of [987_654, 0, -1, 2 ** 40, Number.MAX_SAFE_INTEGER + 2, 1.5]) {
      await expect(store.get(sundae, id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    }
  });
});

describe('delete', () => {
  it('when a document is deleted, then its chunks go with it and it no longer lists or searches', async () => {
    const doc = await store.add(sundae, { title: 'Zeppelin rides', content: 'Zeppelin rides leave at noon. Bring a zeppelin ticket.' });
    expect((await chunkRows(doc.id)).length).toBe(1);
    expect((await store.search(sundae, 'zeppelin', 5)).hits.map((h) => h.document_id)).toEqual([doc.id]);
    await store.delete(sundae, doc.id);
    expect(await chunkRows(doc.id)).toEqual([]);
    expect((await store.list(sundae)).map((d) => d.id)).not.toContain(doc.id);
    expect((await store.search(sundae, 'zeppelin', 5)).hits).toEqual([]);
  });

  it('when another agent deletes a document, then it is a 404 and the document stays', async () => {
    const doc = await store.add(sundae, { title: 'Secret recipe', content: 'The base is two parts cream.' });
    await expect(store.delete(scout, doc.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(await store.get(sundae, doc.id)).toEqual(doc);
    expect((await chunkRows(doc.id)).length).toBe(1);
  });

  it('when an unknown document is deleted, or one twice, then it is a 404', async () => {
    const doc = await store.add(sundae, { title: 'Temp', content: 'Short lived.' });
    await store.delete(sundae, doc.id);
    await expect(store.delete(sundae, doc.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.delete(sundae, 123_456_789)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('when the agent is deleted, then its documents and chunks go with it', async () => {
    const temp = await createAgent(db.sequelize, 'Temp');
    const doc = await store.add(temp, { title: 'Temp doc', content: 'Some words here.' });
    await db.sequelize.query('DELETE FROM agents WHERE id = :temp', { replacements: { temp } });
    expect(await store.list(temp)).toEqual([]);
    expect(await chunkRows(doc.id)).toEqual([]);
  });
});

describe('the chunk table', () => {
  it('when a chunk names an agent other than its document, then the database refuses it', async () => {
    const doc = await store.add(sundae, { title: 'Scoped', content: 'Only Sundae reads this.' });
    await expect(
      db.sequelize.query(`INSERT INTO document_chunks (document_id, agent_id, chunk_index, content) VALUES (:doc, :scout, 5, 'leak')`, {
        replacements: { doc: doc.id, scout },
      }),
    ).rejects.toThrow(/document_chunks_document_fkey/);
  });
});
