// The documents migrations adopting a database the legacy Python app made: its `documents` table is
// kept with every column and row, gains only toolgate's columns, is chunked (by tg.migrate(), after
// the schema) so search finds it, and down() gives back exactly the legacy table.
import { QueryTypes, type Sequelize } from 'sequelize';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { DocumentStore } from '../../src/documents/document-store';
import { createToolgate } from '../../src/toolgate';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database';

// The legacy FastAPI/SQLAlchemy schema: nullable columns, Python-side defaults, no cascades.
const LEGACY_SCHEMA = `
  CREATE TABLE agents (
    id SERIAL PRIMARY KEY, name VARCHAR NOT NULL, description TEXT, system_prompt TEXT,
    enabled_tools TEXT, created_at TIMESTAMP WITHOUT TIME ZONE
  );
  CREATE TABLE documents (
    id SERIAL PRIMARY KEY, agent_id INTEGER REFERENCES agents (id), filename VARCHAR, content TEXT,
    embedding JSON, created_at TIMESTAMP WITHOUT TIME ZONE
  );
  CREATE INDEX ix_documents_agent_id ON documents (agent_id);
  INSERT INTO agents (name, enabled_tools) VALUES ('Sundae', 'document_search'), ('Scout', '');
  INSERT INTO documents (agent_id, filename, content, embedding, created_at) VALUES
    (1, 'returns.txt', 'Melted pints are refunded in full. Send a photo within two days.', '[0.1, 0.2]', '2024-03-01 09:00:00'),
    (2, 'rota.txt', 'Mara opens the Riverside shop on Tuesdays.', NULL, '2024-03-02 10:00:00'),
    (NULL, 'orphan.txt', 'A document that belongs to no agent.', NULL, NULL),
    (1, NULL, NULL, NULL, NULL);
`;

async function rows(sequelize: Sequelize, sql: string): Promise<unknown[]> {
  return sequelize.query(sql, { type: QueryTypes.SELECT });
}

const legacyRows = (s: Sequelize) =>
  rows(s, 'SELECT id, agent_id, filename, content, embedding::text, created_at FROM documents WHERE id <= 4 ORDER BY id');
const columns = (s: Sequelize) =>
  rows(
    s,
    `SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull FROM pg_attribute WHERE attrelid = 'documents'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
  );
const indexes = (s: Sequelize) => rows(s, `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'documents' ORDER BY indexname`);
const constraints = (s: Sequelize) => rows(s, `SELECT conname FROM pg_constraint WHERE conrelid = 'documents'::regclass ORDER BY conname`);

describe('adopting a legacy documents table', () => {
  let db: TestDatabase;
  let before: { rows: unknown[]; columns: unknown[]; indexes: unknown[]; constraints: unknown[] };

  beforeAll(async () => {
    db = await createEmptyDatabase();
    await db.sequelize.query(LEGACY_SCHEMA);
    before = {
      rows: await legacyRows(db.sequelize),
      columns: await columns(db.sequelize),
      indexes: await indexes(db.sequelize),
      constraints: await constraints(db.sequelize),
    };
    await createToolgate({ sequelize: db.sequelize, adoptLegacyTables: true }).migrate();
  });
  afterAll(() => db.drop());

  it('when migrated, then every legacy column and row is as it was, and only toolgate columns were added', async () => {
    expect(await legacyRows(db.sequelize)).toEqual(before.rows);
    const after = (await columns(db.sequelize)) as { attname: string }[];
    expect(after.slice(0, before.columns.length)).toEqual(before.columns);
    expect(after.slice(before.columns.length).map((c) => c.attname)).toEqual(['title']);
    const [comment] = await rows(
      db.sequelize,
      `SELECT col_description('documents'::regclass, attnum) AS c FROM pg_attribute WHERE attrelid = 'documents'::regclass AND attname = 'title'`,
    );
    expect(comment).toEqual({ c: 'added by toolgate' });
  });

  it('when migrated, then a legacy document is listed under its file name, and searchable through its chunks', async () => {
    const store = new DocumentStore(db.sequelize);
    const list = await store.list(1);
    expect(list).toEqual([
      { id: 1, title: 'returns.txt', chunk_count: 1, created_at: expect.any(String) },
      { id: 4, title: '', chunk_count: 0, created_at: null },
    ]);
    const [hit] = (await store.search(1, 'refund melted pints', 5)).hits;
    expect(hit).toMatchObject({ document_id: 1, title: 'returns.txt', chunk_index: 0 });
    expect((await store.search(2, 'refund melted pints', 5)).hits).toEqual([]);
    expect((await store.search(2, 'Riverside', 5)).hits.map((h) => h.document_id)).toEqual([2]);
  });

  it('when the legacy app writes a document after the migration, then the next tg.migrate() indexes it, and only it', async () => {
    const [[late]] = (await db.sequelize.query(
      "INSERT INTO documents (agent_id, filename, content) VALUES (2, 'late.txt', 'Pistachio returns on Friday.') RETURNING id",
    )) as [{ id: number }[], unknown];
    const store = new DocumentStore(db.sequelize);
    expect((await store.search(2, 'pistachio', 5)).hits).toEqual([]);
    await createToolgate({ sequelize: db.sequelize, adoptLegacyTables: true }).migrate();
    expect((await store.search(2, 'pistachio', 5)).hits.map((h) => h.document_id)).toEqual([late!.id]);
    expect(await store.indexUnchunked()).toBe(0);
  });

  it('when migrated, then toolgate can upload, search and delete its own documents in the legacy table', async () => {
    const store = new DocumentStore(db.sequelize);
    const doc = await store.add(1, { title: 'Hours', content: 'The Downtown shop opens at 11 am.' });
    expect((await store.search(1, 'downtown opens', 1)).hits[0]!.document_id).toBe(doc.id);
    await store.delete(1, doc.id);
    expect(await store.list(1)).toHaveLength(2);
  });

  it('when migrated down past the documents migrations, then the legacy table is exactly as it was', async () => {
    const reverted = await migrateDown(db.sequelize, { to: '20261130000006-create-documents.ts' });
    expect(reverted.slice(-2)).toEqual(['20261130000007-create-document-chunks.ts', '20261130000006-create-documents.ts']);
    expect(await legacyRows(db.sequelize)).toEqual(before.rows);
    expect(await columns(db.sequelize)).toEqual(before.columns);
    expect(await indexes(db.sequelize)).toEqual(before.indexes);
    expect(await constraints(db.sequelize)).toEqual(before.constraints);
    expect(await rows(db.sequelize, `SELECT to_regclass('document_chunks') AS t`)).toEqual([{ t: null }]);
    const [table] = await rows(db.sequelize, `SELECT obj_description('documents'::regclass, 'pg_class') AS c`);
    expect(table).toEqual({ c: null });
  });

  it('when migrated up again, then the legacy table is adopted again the same way', async () => {
    await migrateUp(db.sequelize, { adoptLegacyTables: true });
    expect(await legacyRows(db.sequelize)).toEqual(before.rows);
    expect((await new DocumentStore(db.sequelize).list(1)).map((d) => d.title)).toEqual(['returns.txt', '']);
  });
});

describe('a legacy documents table toolgate could not write to', () => {
  it('when a legacy column is required and toolgate would not fill it, then adoption stops naming it, and the table is untouched', async () => {
    const db = await createEmptyDatabase();
    try {
      await db.sequelize.query(`
        CREATE TABLE documents (id SERIAL PRIMARY KEY, agent_id INTEGER, filename VARCHAR NOT NULL, content TEXT);
        INSERT INTO documents (agent_id, filename, content) VALUES (1, 'a.txt', 'Alpha.');`);
      const before = await columns(db.sequelize);
      await expect(migrateUp(db.sequelize, { adoptLegacyTables: true })).rejects.toThrow(/"documents" table: .*filename/);
      expect(await columns(db.sequelize)).toEqual(before);
      expect(await rows(db.sequelize, 'SELECT id, agent_id, filename, content FROM documents')).toEqual([
        { id: 1, agent_id: 1, filename: 'a.txt', content: 'Alpha.' },
      ]);
    } finally {
      await db.drop();
    }
  });
});

describe('a database toolgate created', () => {
  it('when migrated, then documents and document_chunks are marked as created by toolgate, with the GIN index', async () => {
    const db = await createTestDatabase();
    try {
      const marks = await rows(
        db.sequelize,
        `SELECT relname, obj_description(oid, 'pg_class') AS c FROM pg_class WHERE relname IN ('documents', 'document_chunks') ORDER BY relname`,
      );
      expect(marks).toEqual([
        { relname: 'document_chunks', c: 'created by toolgate' },
        { relname: 'documents', c: 'created by toolgate' },
      ]);
      const [gin] = await rows(db.sequelize, `SELECT indexdef FROM pg_indexes WHERE indexname = 'document_chunks_tsv_idx'`);
      expect(gin).toEqual({ indexdef: expect.stringMatching(/USING gin \(tsv\)/) });
    } finally {
      await db.drop();
    }
  });
});
