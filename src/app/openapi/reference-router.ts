// GET /openapi.json and GET /docs: the API reference, served by the service from its own
// dependencies (Swagger UI from swagger-ui-dist), so it works on a machine with no internet. The
// page runs only scripts from this origin, under a CSP of its own.
import path from 'node:path';
import type { Router } from 'express';
import helmet from 'helmet';
import { z } from 'zod';
import { mountRoutes, PASS, routeSection } from '../../../routes/route';

const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
// Only what the page loads; the rest of the package (its demo page, its README) is not served.
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>toolgate API reference</title>
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <main id="swagger-ui"><p>The API reference needs JavaScript. The document itself is <a href="openapi.json">openapi.json</a>.</p></main>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/assets/reference.js"></script>
</body>
</html>
`;

// Relative URLs, so the reference works wherever the service is mounted. No validator badge:
// Swagger UI would otherwise send the document to an outside service.
const SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    defaultModelsExpandDepth: 0,
  });
});
`;

const referenceCsp = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    // Swagger UI styles through its stylesheet and the DOM API, which a CSP allows: no inline style.
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    fontSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
});

/** What the reference's routes serve: the OpenAPI document, as sent. */
export interface ReferenceServices {
  document: string;
}

export const referenceRoutes = routeSection<ReferenceServices>('API reference', (route) => [
  route({
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    description: 'OpenAPI 3.1, generated from the schemas the routes validate with.',
    roles: 'anyone',
    success: { status: 200, description: 'The OpenAPI document' },
    handle: (tg, { res }) => {
      res.type('application/json').send(tg.document);
    },
  }),
  route({
    method: 'get',
    path: '/docs',
    summary: 'The API reference page',
    description: 'HTML: this document, readable, served by the service itself.',
    roles: 'anyone',
    success: { status: 200, description: 'The page (text/html)' },
    use: () => [referenceCsp],
    handle: (_tg, { req, res }) => {
      // The page names its assets relative to /docs; from /docs/ they would resolve under
      // /docs/docs/ and the page would load blank. A relative redirect keeps any mount prefix.
      if (req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, '../docs');
      res.type('html').send(PAGE);
    },
  }),
  route({
    method: 'get',
    path: '/docs/assets/reference.js',
    summary: "The reference page's script",
    roles: 'anyone',
    success: { status: 200, description: 'JavaScript' },
    handle: (_tg, { res }) => {
      res.type('application/javascript').send(SCRIPT);
    },
  }),
  route({
    method: 'get',
    path: '/docs/assets/:file',
    summary: "The reference page's styles, scripts and icons",
    description: 'From the swagger-ui-dist package: swagger-ui.css, swagger-ui-bundle.js and the icons; any other name is a 404.',
    roles: 'anyone',
    params: { file: z.string() },
    success: { status: 200, description: 'The file' },
    handle: async (_tg, { res, params }) => {
      const file = params.file as string;
      if (!ASSETS.has(file)) return PASS;
      await new Promise<void>((resolve, reject) =>
        res.sendFile(path.join(SWAGGER_UI_DIR, file), { maxAge: '1d' }, (err) => (err ? reject(err) : resolve())),
      );
    },
  }),
]);

/** The reference's routes, serving this document. */
export function referenceRouter(document: Record<string, unknown>): Router {
  return mountRoutes(referenceRoutes, { document: JSON.stringify(document) });
}
