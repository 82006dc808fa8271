// JSON with object keys sorted: two values PostgreSQL's jsonb holds equal serialize alike, so they
// compare and hash alike (a tool's input against a pending request's, a retried body against the
// one its Idempotency-Key first came with).

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
