// What toolgate wrote into the legacy application's tables it adopted, taken out again by the undo,
// so that those tables come back as the backup plus what the legacy application wrote since.
//
// The rule: a row is toolgate's when a column toolgate added to the table (commented 'added by
// toolgate'), and that it fills in every row it writes there, holds a value. The legacy application
// never writes a column it does not have.
// - tool_calls: tool_id and run, which every record of toolgate's holds (its calls, refusals and
//   skips). The legacy rows keep their own statuses; toolgate's (denied, skipped, ...) go with it.
// - tasks: source_key, which every task task_creator files holds.
// - agents and documents: none. An agent or a document a client made through toolgate's port of
//   the legacy API is written in the legacy application's own columns, reads there as its own, and
//   stays.
// A table that had such a column of its own before toolgate came cannot be told apart by it: its
// rows are all kept, and the undo says so.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { ADDED_MARK, CREATED_MARK, columnsOf, tableComment } from '../../migrations/lib/adopt-table';
import { quoteIdent } from './quote-ident';

/** Each adoptable table, and the columns toolgate fills in every row it writes there. */
const MARKERS: Record<string, readonly string[]> = {
  tool_calls: ['tool_id', 'run'],
  tasks: ['source_key'],
  agents: [],
  documents: [],
};

export interface AdoptedRows {
  table: string;
  /** Rows removed; null when no column tells toolgate's apart (the rows are kept). */
  removed: number | null;
  /** The columns that told them apart. */
  by: string[];
}

/** Removes toolgate's rows from every adopted table (a table toolgate created goes whole with its migration). */
export async function removeToolgateRows(sequelize: Sequelize, transaction: Transaction): Promise<AdoptedRows[]> {
  const report: AdoptedRows[] = [];
  for (const [table, markers] of Object.entries(MARKERS)) {
    if (markers.length === 0) continue;
    const columns = await columnsOf(sequelize, table, transaction);
    if (columns.length === 0 || (await tableComment(sequelize, table, transaction)) === CREATED_MARK) continue;
    const by = columns.filter((c) => markers.includes(c.name) && c.comment === ADDED_MARK).map((c) => c.name);
    if (by.length === 0) {
      report.push({ table, removed: null, by });
      continue;
    }
    const where = by.map((c) => `${quoteIdent(c)} IS NOT NULL`).join(' OR ');
    const [gone] = await sequelize.query<{ n: number }>(
      `WITH gone AS (DELETE FROM ${quoteIdent(table)} WHERE ${where} RETURNING 1) SELECT count(*)::integer AS n FROM gone`,
      { type: QueryTypes.SELECT, transaction },
    );
    report.push({ table, removed: gone?.n ?? 0, by });
  }
  return report;
}
