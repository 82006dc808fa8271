// HTTP.md's table of routes, written from the routes' declarations: the one list of routes a reader
// of the prose sees, kept equal to what is served by test/openapi/http-reference.test.ts. Run this
// file to rewrite the table after adding a route: `npx tsx test/openapi/route-table.ts`.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { API_ROUTES } from '../../routes/api-routes';
import { healthRoutes } from '../../routes/health';
import { metricsRoutes } from '../../routes/metrics';
import type { RouteDescription } from '../../routes/route';
import { referenceRoutes } from '../../src/app/openapi/reference-router';

export const HTTP_MD = path.join(__dirname, '../../docs/HTTP.md');
const START = '<!-- the table of routes: written by test/openapi/route-table.ts -->';
const END = '<!-- end of the table of routes -->';

/** Every declared route, and whether it is under /api. */
export function declaredRoutes(): { route: RouteDescription; underApi: boolean }[] {
  return [
    ...API_ROUTES.flatMap(({ section }) => section.routes.map((route) => ({ route, underApi: true }))),
    ...[healthRoutes, metricsRoutes, referenceRoutes].flatMap((section) => section.routes.map((route) => ({ route, underApi: false }))),
  ];
}

function roles(route: RouteDescription): string {
  return route.roles === 'anyone' ? 'anyone' : route.roles.join(', ');
}

/** The table as HTTP.md holds it, between its two markers. */
export function routeTable(): string {
  const rows = declaredRoutes().map(
    ({ route, underApi }) =>
      `| \`${route.method.toUpperCase()} ${route.path}\`${underApi ? '' : ' (outside `/api`)'} | ${roles(route)} | ${[route.success, ...(route.also ?? [])].map((a) => a.status).join(', ')} |`,
  );
  return [START, '| Method and path | Who may call | Success |', '|---|---|---|', ...rows, END].join('\n');
}

/** The table HTTP.md holds now, or null when its markers are missing. */
export function tableInHttpMd(markdown: string): string | null {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  return start < 0 || end < start ? null : markdown.slice(start, end + END.length);
}

if (require.main === module) {
  const markdown = readFileSync(HTTP_MD, 'utf8');
  const current = tableInHttpMd(markdown);
  if (current === null) throw new Error(`docs/HTTP.md has no table markers: put ${START} and ${END} where the table goes.`);
  writeFileSync(HTTP_MD, markdown.replace(current, routeTable()));
}
