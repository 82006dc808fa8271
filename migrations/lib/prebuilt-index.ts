// For migrations that build an index an operator may have built beforehand with CONCURRENTLY
// (docs/MIGRATING.md): the statements that keep a valid index of that name, replace one a failed
// concurrent build left invalid, and otherwise build it in the migration's transaction.

/** SQL that leaves `name` a valid index, made by `create` (a CREATE [UNIQUE] INDEX IF NOT EXISTS of that name) when missing. */
export function keepOrBuildIndex(name: string, create: string): string {
  return `DO $$ BEGIN
         IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('${name}') AND NOT indisvalid) THEN
           DROP INDEX ${name};
         END IF;
       END $$;
       ${create};`;
}
