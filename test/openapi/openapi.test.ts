// GET /openapi.json is a valid OpenAPI 3.1 document that describes every route the app serves,
// each with the errors it can answer, and the request shapes are the schemas the routes parse
// with. GET /docs serves the reference page from the app's own dependencies.
import { compileErrors, validate } from '@readme/openapi-parser';
import type { Express } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { toolkitInputSchema } from '../../src/services/toolkits';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;
let document: { openapi: string; paths: Record<string, Record<string, Operation>> };

interface Operation {
  requestBody?: { content: { 'application/json': { schema: unknown } } };
  parameters?: { name: string; in: string }[];
  responses: Record<string, unknown>;
  security: unknown[];
}

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  document = (await request(t.app).get('/openapi.json').expect(200)).body;
});
afterAll(() => t.close());

/** Every route the app serves, walking its routers as Express holds them (router@2's layers). */
function servedRoutes(app: Express): string[] {
  type Layer = { rawPath?: string | RegExp; route?: { path: string; methods: Record<string, boolean> }; handle: { stack?: Layer[] } };
  const found: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        // A router's root route is its mount's own path: /mcp, not /mcp/.
        const at = layer.route.path === '/' && prefix !== '' ? prefix : `${prefix}${layer.route.path}`;
        for (const method of Object.keys(layer.route.methods)) found.push(`${method.toUpperCase()} ${at}`);
      } else if (layer.handle.stack) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return [...new Set(found)].sort();
}

function describedRoutes(): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`))
    .sort();
}

describe('the OpenAPI document', () => {
  test('when validated by @readme/openapi-parser, then it is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.valid).toBe(true);
  });

  test('when the app serves a route, then the document describes it, and describes nothing it does not serve', () => {
    // The dashboard's pages are HTML forms for people, not an API: the reference leaves them out.
    const served = servedRoutes(t.app).filter((r) => !r.split(' ')[1]!.startsWith('/admin'));
    expect(servedRoutes(t.app)).toContain('GET /admin/agents');
    // There is something to compare: the router's routes and the app's own.
    expect(served).toEqual(
      expect.arrayContaining(['GET /api/toolkits', 'POST /api/agents/:id/tool-calls', 'GET /healthz', 'GET /openapi.json', 'GET /docs']),
    );
    expect(describedRoutes()).toEqual(served);
  });

  test('when a route needs a token, reads an id, or takes a body, then its errors say so', () => {
    const operations = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ route: `${method} ${path}`, op })),
    );
    expect(operations.length).toBeGreaterThan(30);
    for (const { route, op } of operations) {
      const statuses = Object.keys(op.responses);
      const expected = ['500'];
      if (op.security.length > 0) expected.push('401', '403', '503');
      if (/\{(id|toolkitId|attachmentId|ruleId|docId)\}/.test(route)) expected.push('404', '422');
      if (op.requestBody) expected.push('400', '413', '415', '422');
      expect({ route, statuses }).toEqual({ route, statuses: expect.arrayContaining(expected) });
      expect({ route, success: statuses.some((s) => s.startsWith('2')) }).toEqual({ route, success: true });
    }
    expect(Object.keys(document.paths['/api/agents/{id}/email/analyze']!.post!.responses)).toEqual(
      expect.arrayContaining(['403', '429', '502']),
    );
    expect(Object.keys(document.paths['/api/toolkits']!.post!.responses)).toContain('409');
  });

  test('when a route parses its body with a schema, then the document shows that very schema', () => {
    const { $schema: _dialect, ...expected } = z.toJSONSchema(toolkitInputSchema, { io: 'input', target: 'draft-2020-12' });
    expect(document.paths['/api/toolkits']!.post!.requestBody!.content['application/json'].schema).toEqual(expected);
    const query = document.paths['/api/agents/{id}/tool-calls']!.get!.parameters!.map((p) => `${p.in}:${p.name}`);
    expect(query).toEqual(['path:id', 'query:limit', 'query:after', 'query:status']);
    const agents = document.paths['/api/agents']!.get!.parameters!.map((p) => `${p.in}:${p.name}`);
    expect(agents).toEqual(['query:limit', 'query:after', 'query:name']);
  });
});

describe('the reference page', () => {
  test('when /docs is opened, then it loads Swagger UI from this origin under a CSP of its own, and no other file of the package', async () => {
    const page = await request(t.app).get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const src of [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)) {
      await request(t.app).get(`/${src}`).expect(200);
    }
    await request(t.app).get('/docs/assets/index.html').expect(404);
    await request(t.app).get('/docs/assets/package.json').expect(404);
  });

  test("when /docs/ is opened, then it is sent to /docs, where the page's assets resolve", async () => {
    const res = await request(t.app).get('/docs/').expect(301);
    expect(new URL(res.headers.location!, 'http://host/docs/').pathname).toBe('/docs');
  });
});
