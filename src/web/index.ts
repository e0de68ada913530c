/**
 * What people open in a browser, served beside the API: the OpenAPI document (`/openapi.json`), its
 * interactive documentation (`/docs`, redoc's standalone bundle from node_modules, no CDN), and the web
 * page that browses the data (`/`, a small script bundled from src/web/page at first request, and
 * igv.js's bundle from node_modules for its genome browser).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Route } from '../http/router.js';
import type { Reply } from '../protocol/reply.js';
import { buildOpenApiDocument, type AreaRoutes } from './openapi.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const content = (contentType: string, body: Uint8Array | string, cacheControl = 'no-cache'): Reply => ({
  kind: 'content',
  contentType,
  body: typeof body === 'string' ? Buffer.from(body) : body,
  cacheControl,
});

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    made.catch(() => (made = undefined)); // a failed build is tried again on the next request
    return made;
  };
}

/** The page's script: src/web/page/main.ts and the typed client, bundled and minified (esbuild). */
export const pageScript = once(async () => {
  const esbuild = await import('esbuild');
  const built = await esbuild.build({
    entryPoints: [path.join(HERE, 'page', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2020',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return built.outputFiles[0].contents;
});

const pageHtml = once(async () => fs.promises.readFile(path.join(HERE, 'page', 'index.html')));
/**
 * redoc's standalone bundle as installed, but for the one request it makes elsewhere: the Redocly logo
 * in the menu's footer is fetched from their CDN. It becomes an empty image, so the docs ask no other origin.
 */
export const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
export const EMPTY_SVG = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%221%22 height=%221%22/%3E';
const redocBundle = once(async () => {
  const text = await fs.promises.readFile(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  return Buffer.from(text.replaceAll(REDOC_LOGO_URL, EMPTY_SVG));
});

/** igv.js's ESM bundle as installed, for the genome browser view (views/browser.ts). */
const igvBundle = once(async () => fs.promises.readFile(require.resolve('igv/dist/igv.esm.min.js')));

/** Links are relative, so the pages also work under the version prefix and behind a proxy's sub-path. */
const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API documentation</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<div id="redoc"></div>
<script src="docs/redoc.standalone.js"></script>
<script>Redoc.init('openapi.json', { hideDownloadButton: false, disableSearch: false, expandResponses: '200' }, document.getElementById('redoc'));</script>
</body>
</html>
`;

export function webRoutes(areaRoutes: AreaRoutes[]): Route[] {
  const { document } = buildOpenApiDocument(areaRoutes);
  const openApiJson = Buffer.from(JSON.stringify(document));
  const html = 'text/html; charset=utf-8';
  return [
    {
      method: 'GET',
      path: '/openapi.json',
      handle: async () => content('application/json; charset=utf-8', openApiJson),
    },
    { method: 'GET', path: '/docs', handle: async () => content(html, DOCS_HTML) },
    {
      method: 'GET',
      path: '/docs/redoc.standalone.js',
      handle: async () => content('text/javascript; charset=utf-8', await redocBundle(), 'public, max-age=86400'),
    },
    { method: 'GET', path: '/', handle: async () => content(html, await pageHtml()) },
    { method: 'GET', path: '/ui/app.js', handle: async () => content('text/javascript; charset=utf-8', await pageScript()) },
    {
      method: 'GET',
      path: '/ui/igv.esm.min.js',
      handle: async () => content('text/javascript; charset=utf-8', await igvBundle(), 'public, max-age=86400'),
    },
  ];
}
