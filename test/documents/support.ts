// Arranging document tests: agents made with plain SQL, and the committed corpus uploaded to one.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { DocumentStore } from '../../src/documents/document-store';
import { loadCorpus } from '../fixtures/corpus/load';

export async function createAgent(sequelize: Sequelize, name: string): Promise<number> {
  const [row] = await sequelize.query<{ id: number }>('INSERT INTO agents (name) VALUES (:name) RETURNING id', {
    replacements: { name },
    type: QueryTypes.SELECT,
  });
  return row!.id;
}

/** Uploads every corpus document; returns document ids by slug. */
export async function uploadCorpus(store: DocumentStore, agentId: number): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const doc of loadCorpus()) ids.set(doc.slug, (await store.add(agentId, { title: doc.title, content: doc.content })).id);
  return ids;
}
