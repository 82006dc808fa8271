// The routes are declared once (routes/route.ts), and the two lists that must remain beside the
// declarations, HTTP.md's table and headings and the route groups a host switches off, are held to
// them here.
import { readFileSync } from 'node:fs';
import { API_ROUTES, ROUTE_GROUPS } from '../../routes/api-routes';
import { declaredRoutes, HTTP_MD, routeTable, tableInHttpMd } from './route-table';

const markdown = readFileSync(HTTP_MD, 'utf8');
/** `GET /agents/:id/toolkits/:attachment_id` and `:attachmentId` are one route. */
const key = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/:[A-Za-z_]+/g, ':_')}`;

test("when a route is declared, HTTP.md's table of routes lists it, with who may call and its success, and lists nothing else", () => {
  // On a difference, `npx tsx test/openapi/route-table.ts` rewrites the table from the declarations.
  expect(tableInHttpMd(markdown)).toBe(routeTable());
});

test('when HTTP.md describes a route under a heading, the route is declared, and every declared route under /api has a heading', () => {
  const headings = [...markdown.matchAll(/^#### `(GET|POST|PUT|PATCH|DELETE) ([^ `?{]+)/gm)].map((m) => key(m[1]!, m[2]!));
  const declared = declaredRoutes().map(({ route }) => key(route.method, route.path));
  const underApi = declaredRoutes()
    .filter(({ underApi }) => underApi)
    .map(({ route }) => key(route.method, route.path));
  expect(headings.filter((h) => !declared.includes(h))).toEqual([]);
  expect(underApi.filter((d) => !headings.includes(d))).toEqual([]);
});

test('when a host switches a route group off, it removes routes: every group has at least one section, and every route is in a group', () => {
  expect(ROUTE_GROUPS.filter((group) => !API_ROUTES.some((s) => s.group === group && s.section.routes.length > 0))).toEqual([]);
  expect(new Set(API_ROUTES.map((s) => s.group))).toEqual(new Set(ROUTE_GROUPS));
});
