// Which requests a section of routes could serve, asked before its router tries each route in turn:
// Express matches a request against every route of every section mounted before the one that serves
// it, and for POST /agents/:id/tool-calls that matching was the largest part of the router's own
// work (docs/PERFORMANCE.md). The guard only ever says "no" when no route of the section can match
// (the method, then the path's segments, as Express matches them: case-insensitive, one trailing
// slash allowed); for a path it cannot read so, and for OPTIONS (which a router answers from every
// route it matched), it lets the router decide.
import type { Request } from 'express';

/** A route's path as segments: a literal (lower case) or a parameter (null, any non-empty segment). */
type Segments = (string | null)[];

const SIMPLE_PATH = /^(\/([A-Za-z0-9_.-]+|:[A-Za-z_][A-Za-z0-9_]*))+$/;

/** A test for `routes`, or null when one of them is not a plain path of literals and `:name` parameters (then every request goes in). */
export function routeGuard(routes: readonly { method: string; path: string }[]): ((req: Request) => boolean) | null {
  if (routes.length === 0 || !routes.every((r) => SIMPLE_PATH.test(r.path))) return null;
  const paths = routes.map((r) => ({
    // Express serves HEAD with a GET route.
    methods: r.method === 'get' ? ['GET', 'HEAD'] : [r.method.toUpperCase()],
    segments: r.path
      .slice(1)
      .split('/')
      .map((s): string | null => (s.startsWith(':') ? null : s.toLowerCase())),
  }));
  return function mayServe(req: Request): boolean {
    if (req.method === 'OPTIONS') return true;
    let path = req.path;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    if (!path.startsWith('/')) return true;
    const segments = path.slice(1).split('/');
    return paths.some((route) => route.methods.includes(req.method) && matches(route.segments, segments));
  };
}

function matches(route: Segments, segments: string[]): boolean {
  return route.length === segments.length && route.every((s, i) => (s === null ? segments[i] !== '' : s === segments[i]!.toLowerCase()));
}
