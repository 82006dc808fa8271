// routeGuard(): a section's router is left at once only by a request none of its routes can serve,
// matched as Express matches a route (case-insensitive, one trailing slash allowed).
import type { Request } from 'express';
import { routeGuard } from '../../routes/route-guard';

const guard = routeGuard([
  { method: 'post', path: '/agents/:id/tool-calls' },
  { method: 'get', path: '/toolkits' },
])!;
const req = (method: string, path: string) => ({ method, path }) as Request;

test('when a request matches a route of the section, then it goes in', () => {
  expect(guard(req('POST', '/agents/7/tool-calls'))).toBe(true);
  expect(guard(req('POST', '/Agents/7/Tool-Calls/'))).toBe(true);
  expect(guard(req('GET', '/toolkits'))).toBe(true);
  expect(guard(req('HEAD', '/toolkits'))).toBe(true);
});

test('when no route of the section has its method or its path, then it is passed on', () => {
  expect(guard(req('GET', '/agents/7/tool-calls'))).toBe(false);
  expect(guard(req('POST', '/agents/7/tool-calls/extra'))).toBe(false);
  expect(guard(req('POST', '/agents//tool-calls'))).toBe(false);
  expect(guard(req('POST', '/agents/7/tool-calls//'))).toBe(false);
});

test('when the request is an OPTIONS, then the router decides', () => {
  expect(guard(req('OPTIONS', '/nowhere'))).toBe(true);
});

test('when a route is not a plain path of literals and parameters, then there is no guard', () => {
  expect(routeGuard([{ method: 'get', path: '/files/*rest' }])).toBeNull();
  expect(routeGuard([])).toBeNull();
});
