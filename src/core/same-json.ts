// Whether two JSON values are equal as JSON: objects by their keys and values, in any key order;
// arrays item by item. A walk without recursion, each value visited once, so a value nested
// thousands deep (what an MCP server may list as a schema) costs its size, not its depth times it.

export function sameJson(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  for (let pair = stack.pop(); pair !== undefined; pair = stack.pop()) {
    const [x, y] = pair;
    if (x === y) continue;
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      const ys = y as unknown[];
      if (x.length !== ys.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], ys[i]]);
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const keys = Object.keys(xo).filter((k) => xo[k] !== undefined);
    if (keys.length !== Object.keys(yo).filter((k) => yo[k] !== undefined).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(yo, key)) return false;
      stack.push([xo[key], yo[key]]);
    }
  }
  return true;
}
