import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeTemplates } from './route-template';

/** A build's route manifest as Next.js writes it (only the fields read). */
function buildWith(manifest: object): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'vouch-routes-'));
  writeFileSync(path.join(dir, 'routes-manifest.json'), JSON.stringify(manifest));
  return dir;
}

const routes = routeTemplates(
  buildWith({
    staticRoutes: [{ page: '/' }, { page: '/console/cases' }, { page: '/oauth2/token' }],
    dynamicRoutes: [
      { page: '/v/[publicId]', regex: '^/v/([^/]+?)(?:/)?$' },
      { page: '/v/[publicId]/email/[token]', regex: '^/v/([^/]+?)/email/([^/]+?)(?:/)?$' },
      { page: '/api/auth/[...all]', regex: '^/api/auth/(.+?)(?:/)?$' },
      { page: '/v1/[[...path]]', regex: '^/v1(?:/(.+?))?(?:/)?$' },
    ],
  }),
);

describe('route templates', () => {
  it("names the REST API's routes by their published paths, ids as {names}", () => {
    expect(routes.of('/v1/cases/')).toBe('/v1/cases/');
    expect(routes.of('/v1/cases/0a7c6f3e-93b5-4f3e-9d5b-1c2d3e4f5a6b/')).toBe('/v1/cases/{id}/');
    expect(routes.of('/v1/cases/0a7c6f3e-93b5-4f3e-9d5b-1c2d3e4f5a6b')).toBe('/v1/cases/{id}/');
    expect(routes.of('/v1/webhooks/endpoints/abc/')).toMatch(/^\/v1\/webhooks\/endpoints\/\{[a-z_]+\}\/$/);
  });

  it("names pages by the build's manifest, its [params] as {params}", () => {
    expect(routes.of('/')).toBe('/');
    expect(routes.of('/console/cases')).toBe('/console/cases');
    expect(routes.of('/console/cases/')).toBe('/console/cases');
    expect(routes.of('/v/AbCdEfGhIjKlMnOpQr')).toBe('/v/{publicId}');
    expect(routes.of('/v/AbCdEfGhIjKlMnOpQr/email/some-secret-token')).toBe('/v/{publicId}/email/{token}');
    expect(routes.of('/api/auth/sign-in/email')).toBe('/api/auth/{all}');
  });

  it('names health, static files and nothing else', () => {
    expect(routes.of('/livez')).toBe('/livez');
    expect(routes.of('/readyz')).toBe('/readyz');
    expect(routes.of('/_next/static/chunks/app-1234.js')).toBe('/_next/static/{path}');
    // What no route serves has no template: a label never holds a path a client made up.
    expect(routes.of('/nothing/here')).toBeNull();
    expect(routes.of('/v1/nothing/person@example.com/')).toBeNull();
    expect(routes.of('/v/a/b/c/d')).toBeNull();
  });

  it('without a manifest (development) still names the API and health', () => {
    const bare = routeTemplates(path.join(tmpdir(), 'no-such-build'));
    expect(bare.of('/v1/cases/')).toBe('/v1/cases/');
    expect(bare.of('/readyz')).toBe('/readyz');
    expect(bare.of('/v/AbCdEfGhIjKlMnOpQr')).toBeNull();
  });
});
