// JSON with object keys sorted: two values PostgreSQL's jsonb holds equal serialize alike, so they
// compare and hash alike (a tool's input against a pending request's, a retried body against the
// one its Idempotency-Key first came with). Written without recursion, so no depth of nesting
// exhausts the stack (a host's own body parser may hand it anything); it writes what
// JSON.stringify would of the value with its keys sorted.

type Frame =
  | { kind: 'array'; items: unknown[]; next: number; out: string[] }
  | { kind: 'object'; source: Record<string, unknown>; keys: string[]; next: number; out: string[] };

export function canonicalJson(value: unknown): string {
  let result: string | undefined;
  const stack: Frame[] = [];
  // Each step either finishes a value (handed to its container, or the result) or opens a container.
  let pending: { value: unknown; key: string } | null = { value, key: '' };
  for (;;) {
    if (pending !== null) {
      const holder = stack[stack.length - 1];
      const v = toJsonValue(pending.value, pending.key);
      pending = null;
      if (v !== null && typeof v === 'object') {
        stack.push(
          Array.isArray(v)
            ? { kind: 'array', items: v, next: 0, out: [] }
            : { kind: 'object', source: v as Record<string, unknown>, keys: sortedKeys(v as Record<string, unknown>), next: 0, out: [] },
        );
        continue;
      }
      const text = v === undefined || typeof v === 'function' || typeof v === 'symbol' ? undefined : JSON.stringify(v);
      if (!deliver(holder, text)) {
        result = text;
        break;
      }
    }
    const top = stack[stack.length - 1];
    if (top === undefined) break;
    if (top.kind === 'array' && top.next < top.items.length) {
      pending = { value: top.items[top.next], key: String(top.next) };
      top.next++;
      continue;
    }
    if (top.kind === 'object' && top.next < top.keys.length) {
      const key = top.keys[top.next]!;
      pending = { value: top.source[key], key };
      top.next++;
      continue;
    }
    stack.pop();
    const text = top.kind === 'array' ? `[${top.out.join(',')}]` : `{${top.out.join(',')}}`;
    if (!deliver(stack[stack.length - 1], text)) {
      result = text;
      break;
    }
  }
  // JSON.stringify's answer for a value with no JSON form (undefined, a function) is undefined.
  return result as string;
}

/** Hands a finished value to its container; false when there is none (it is the result). */
function deliver(holder: Frame | undefined, text: string | undefined): boolean {
  if (holder === undefined) return false;
  if (holder.kind === 'array') holder.out.push(text ?? 'null');
  else if (text !== undefined) holder.out.push(`${JSON.stringify(holder.keys[holder.next - 1])}:${text}`);
  return true;
}

/** The value as JSON.stringify sees it: toJSON applied, boxed primitives unboxed. */
function toJsonValue(value: unknown, key: string): unknown {
  let v = value;
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (v instanceof Number || v instanceof String || v instanceof Boolean) v = v.valueOf();
  return v;
}

/**
 * The keys in the order the earlier, recursive form wrote them (an object rebuilt with its keys
 * sorted, which JavaScript lists with array-index keys first, in numeric order), so digests stored
 * by an earlier version still match.
 */
function sortedKeys(source: Record<string, unknown>): string[] {
  return Object.keys(
    Object.fromEntries(
      Object.keys(source)
        .sort(byCodeUnit)
        .map((k) => [k, true]),
    ),
  );
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
