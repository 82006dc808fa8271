// How deep a parsed JSON value nests, found without recursion: a hostile body of nested brackets
// must not exhaust the stack, and the walk is linear in the value's size (each value visited once).

/** Where a JSON value first nests deeper than maxDepth arrays and objects (keys and indexes); null when it does not. */
export function tooDeepAt(value: unknown, maxDepth: number): (string | number)[] | null {
  interface Visit {
    value: unknown;
    depth: number;
    key: string | number | null;
    parent: Visit | null;
  }
  const stack: Visit[] = [{ value, depth: 0, key: null, parent: null }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const inner = visit.value;
    if (inner === null || typeof inner !== 'object') continue;
    const depth = visit.depth + 1;
    if (depth > maxDepth) return pathOf(visit);
    if (Array.isArray(inner)) {
      for (let i = inner.length - 1; i >= 0; i--) stack.push({ value: inner[i], depth, key: i, parent: visit });
    } else {
      const keys = Object.keys(inner);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push({ value: (inner as Record<string, unknown>)[key], depth, key, parent: visit });
      }
    }
  }
  return null;

  function pathOf(visit: Visit): (string | number)[] {
    const path: (string | number)[] = [];
    for (let at: Visit | null = visit; at !== null && at.key !== null; at = at.parent) path.push(at.key);
    return path.reverse();
  }
}
