// The Cranfield test collection in bench/data/cranfield (its README says what it is): 1,400
// abstracts, 225 queries and their graded relevance judgements, read from the three SMART-format files.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Judgements } from './ranking-metrics';

export const CRANFIELD_DIR = path.join(__dirname, 'data', 'cranfield');

export interface CollectionDocument {
  id: number;
  title: string;
  /** The abstract, which starts with the title again; lines joined, whitespace collapsed. */
  text: string;
}

export interface CollectionQuery {
  /** The query's number in the judgements: its place in cran.qry, 1 to 225. */
  id: number;
  text: string;
}

/** One line of cranqrel: a grade of 1 (a complete answer) to 4 (of minimum interest), or -1. */
export interface Qrel {
  queryId: number;
  documentId: number;
  grade: number;
}

export interface Collection {
  name: string;
  documents: CollectionDocument[];
  queries: CollectionQuery[];
  qrels: Qrel[];
}

export function loadCranfield(dir = CRANFIELD_DIR): Collection {
  const read = (file: string) => readFileSync(path.join(dir, file), 'utf8');
  const documents = smartRecords(read('cran.all.1400')).map((r) => ({ id: Number(r.id), title: r.T ?? '', text: r.W ?? '' }));
  // cran.qry's own .I numbers run from 001 to 365 with gaps; the judgements number the queries in file order.
  const queries = smartRecords(read('cran.qry')).map((r, i) => ({ id: i + 1, text: r.W ?? '' }));
  const qrels = read('cranqrel')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [queryId, documentId, grade] = line.trim().split(/\s+/).map(Number);
      return { queryId: queryId!, documentId: documentId!, grade: grade! };
    });
  return { name: 'Cranfield', documents, queries, qrels };
}

/**
 * The gains the metrics use, per query. Cleverdon's grades run from 1 (a complete answer) to 4 (of
 * minimum interest), so gain = 5 - grade: 4, 3, 2, 1. Grade -1, one document per query, is not on
 * that scale and counts as not relevant. `binary` instead makes every judged pair relevant with gain 1.
 */
export function judgementsOf(collection: Collection, scheme: 'graded' | 'binary' = 'graded'): Map<number, Judgements> {
  const byQuery = new Map<number, Map<number, number>>();
  for (const { queryId, documentId, grade } of collection.qrels) {
    const gain = scheme === 'binary' ? 1 : grade >= 1 && grade <= 4 ? 5 - grade : 0;
    if (!byQuery.has(queryId)) byQuery.set(queryId, new Map());
    const judged = byQuery.get(queryId)!;
    judged.set(documentId, Math.max(gain, judged.get(documentId) ?? 0));
  }
  return byQuery;
}

type SmartRecord = { id: string } & Partial<Record<'T' | 'A' | 'B' | 'W', string>>;

/**
 * Records of the SMART format: `.I <id>`, then fields each opened by `.T`, `.A`, `.B` or `.W` on a line
 * of its own. A field opened twice in a record (a few abstracts have that fault) runs on.
 */
function smartRecords(text: string): SmartRecord[] {
  const records: SmartRecord[] = [];
  let field: 'T' | 'A' | 'B' | 'W' | undefined;
  for (const line of text.split('\n')) {
    const id = /^\.I\s+(\d+)\s*$/.exec(line);
    const opens = /^\.([TABW])\s*$/.exec(line);
    if (id) {
      records.push({ id: id[1]! });
      field = undefined;
    } else if (opens) {
      field = opens[1] as 'T' | 'A' | 'B' | 'W';
    } else if (field && records.length > 0) {
      const record = records[records.length - 1]!;
      record[field] = `${record[field] ?? ''} ${line}`;
    }
  }
  for (const record of records)
    for (const key of ['T', 'A', 'B', 'W'] as const) if (record[key] !== undefined) record[key] = record[key].replace(/\s+/g, ' ').trim();
  return records;
}
