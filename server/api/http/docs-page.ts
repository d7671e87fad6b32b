import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The API reference at /docs: Scalar's reference renderer (@scalar/api-reference, its browser
 * bundle), served from our own origin, reading /v1/openapi.json. Nothing is loaded from anywhere
 * else (no CDN, no fonts, no telemetry, no AI agent or MCP), so it works offline and under a
 * policy that allows scripts from this origin only.
 */
const SCALAR_PACKAGE = path.join(process.cwd(), 'node_modules', '@scalar', 'api-reference');
const SCALAR_VERSION = (
  JSON.parse(readFileSync(path.join(SCALAR_PACKAGE, 'package.json'), 'utf8')) as { version: string }
).version;

/** Versioned names, so the assets can be cached for good and a new version is a new URL. */
export const DOCS_ASSETS = {
  renderer: `scalar-${SCALAR_VERSION}.js`,
  start: `start-${SCALAR_VERSION}.js`,
} as const;

/** The renderer's settings: our document, our origin's fonts, none of its network features. */
const SCALAR_SETTINGS = {
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  hideClientButton: true,
  documentDownloadType: 'json',
  defaultHttpClient: { targetKey: 'node', clientKey: 'fetch' },
  orderRequiredPropertiesFirst: true,
};

/** Each asset's body; the web process serves them (static-assets.ts), reading each once. */
export function docsAssetBody(asset: keyof typeof DOCS_ASSETS): string {
  if (asset === 'renderer') {
    return readFileSync(path.join(SCALAR_PACKAGE, 'dist', 'browser', 'standalone.js'), 'utf8');
  }
  return `Scalar.createApiReference('#reference', ${JSON.stringify(SCALAR_SETTINGS)});\n`;
}

/**
 * The page's policy: scripts from this origin only (no inline script, no eval); the renderer
 * writes its styles inline. Connections go to this origin only (the document, "Send request").
 */
export const DOCS_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function docsPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vouch API reference</title>
</head>
<body>
<noscript>The reference needs JavaScript. The OpenAPI document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="reference"></div>
<script src="/docs/assets/${DOCS_ASSETS.renderer}"></script>
<script src="/docs/assets/${DOCS_ASSETS.start}"></script>
</body>
</html>
`;
}
