import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REST_ROUTES } from '@/server/api/rest/routes';
import { isRestApiPath } from '@/server/api/rest/serve-rest-api';

/**
 * The route a request matched, as a template (`/v1/cases/{id}/`, `/v/{publicId}/sms`): what
 * metrics and traces label requests with (`http.route`), so no label holds an id, a token or
 * whatever path a client made up. Null for a path no route serves.
 *
 * The REST API's templates are its published paths; the pages' are Next.js's build manifest (its
 * `[param]` written `{param}`, like the API's); static files share one.
 */
export interface RouteTemplates {
  of(pathname: string): string | null;
}

interface ManifestRoute {
  page: string;
  regex?: string;
}

const HEALTH_PATHS = new Set(['/livez', '/readyz']);

function asTemplate(page: string): string {
  return page.replace(/\[\[?(?:\.\.\.)?([^\]]+)\]?\]/g, '{$1}');
}

export function routeTemplates(distDir: string): RouteTemplates {
  let manifest: { staticRoutes: ManifestRoute[]; dynamicRoutes: ManifestRoute[] } = {
    staticRoutes: [],
    dynamicRoutes: [],
  };
  try {
    manifest = JSON.parse(readFileSync(path.join(distDir, 'routes-manifest.json'), 'utf8'));
  } catch {
    // In development Next writes no manifest: pages go unlabelled, the API and health keep theirs.
  }
  const pages = new Map(manifest.staticRoutes.map((route) => [route.page, route.page]));
  const dynamic = manifest.dynamicRoutes
    .filter((route) => route.regex && !route.page.startsWith('/v1/'))
    .map((route) => ({ pattern: new RegExp(route.regex as string), template: asTemplate(route.page) }));
  const rest = REST_ROUTES.map((route) => ({ pattern: route.pattern, template: `/v1${route.path}` }));

  return {
    of(pathname) {
      if (HEALTH_PATHS.has(pathname)) return pathname;
      if (isRestApiPath(pathname))
        return rest.find((route) => route.pattern.test(pathname))?.template ?? null;
      if (pathname.startsWith('/_next/static/')) return '/_next/static/{path}';
      const page = pages.get(pathname.length > 1 ? pathname.replace(/\/$/, '') : pathname);
      if (page) return page;
      return dynamic.find((route) => route.pattern.test(pathname))?.template ?? null;
    },
  };
}
