// A PostgreSQL identifier, quoted: kept apart from database-url.ts so that the library's modules
// that quote a schema or table name do not pull in the embedded server the service alone starts.
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}
