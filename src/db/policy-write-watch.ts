// Read-your-writes on this instance: a write to a policy table made through this Sequelize clears
// the local policy cache as soon as it is committed, before the request that made it answers. Other
// instances (and this one, for writes from elsewhere) learn of it by NOTIFY, a moment later.
//
// A statement that is not a plain SELECT, says a word that writes and names a policy table, outside
// its string literals, counts as a write; a read-only WITH (the policy loader's) does not. A false
// positive costs a cache miss, a false negative would serve a revoked grant until the notification.
// The literals are left out because Sequelize pastes replacement values into the SQL: an email
// whose subject says "agents" must not empty the cache.
import type { QueryOptions, Sequelize, Transaction } from 'sequelize';

const POLICY_TABLE = /\b(?:agents|agent_access_rules|agent_toolkits|agent_toolkit_rules|toolkits|agent_policy_versions|policy_epoch)\b/i;
const READ_ONLY = /^\s*SELECT\b/i;
const WRITES = /\b(?:INSERT|UPDATE|DELETE|MERGE|TRUNCATE|COPY|ALTER|DROP|CREATE)\b/i;
/** A standard SQL string literal ('' inside is a quote), as Sequelize writes replacement values. */
const STRING_LITERAL = /'(?:[^']|'')*'/g;
const HOOK = 'afterQuery';

let hooks = 0;

/** Calls onWrite after each committed write to a policy table through sequelize; returns the undo. */
export function watchPolicyWrites(sequelize: Sequelize, onWrite: () => void): () => void {
  const name = `toolgate-policy-writes-${(hooks += 1)}`;
  const told = new WeakSet<Transaction>();
  const afterQuery = (options: QueryOptions, query: { sql?: unknown }) => {
    const sql = typeof query?.sql === 'string' ? query.sql : '';
    if (!isPolicyWrite(sql)) return;
    const transaction = options?.transaction;
    if (!transaction) return onWrite();
    if (told.has(transaction)) return;
    told.add(transaction);
    transaction.afterCommit(() => onWrite());
  };
  (sequelize.addHook as (type: string, name: string, fn: typeof afterQuery) => void)(HOOK, name, afterQuery);
  return () => (sequelize.removeHook as (type: string, name: string) => void)(HOOK, name);
}

/** Whether a statement, as sent, may change what a policy reads. */
function isPolicyWrite(sql: string): boolean {
  if (READ_ONLY.test(sql)) return false;
  const code = sql.replace(STRING_LITERAL, "''");
  return WRITES.test(code) && POLICY_TABLE.test(code);
}
