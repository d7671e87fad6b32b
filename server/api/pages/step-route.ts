import type { MethodRoutes, StepHandler } from '@/server/api/page-kit/method-routes';
import { answerPage, pageFrame } from '@/server/api/page-kit/page-request';
import { notFoundPage } from '@/server/api/page-kit/respond';
import { METHOD_ROUTES } from '@/server/verification/methods/routes';

const BY_SEGMENT = new Map<string, MethodRoutes>(METHOD_ROUTES.map((routes) => [routes.segment, routes]));

/** The handlers for the rest of a step's path: a fixed name first, else a link's token. */
function handlersFor(routes: MethodRoutes, rest: readonly string[]) {
  if (rest.length === 0) return routes.paths[''];
  if (rest.length !== 1) return undefined;
  const [part = ''] = rest;
  return Object.hasOwn(routes.paths, part) && part !== ':token' ? routes.paths[part] : routes.paths[':token'];
}

/**
 * `/v/<public id>/<segment>/…`: a step's page or form, served by the method that declares the
 * segment (server/verification/methods/routes.ts). Anything else is not found; a method the path
 * does not take is refused with the methods it does.
 */
export function serveStep(
  request: Request,
  params: { publicId: string; step: string; rest?: readonly string[] },
): Promise<Response> {
  const routes = BY_SEGMENT.get(params.step);
  const handlers = routes ? handlersFor(routes, params.rest ?? []) : undefined;
  if (!handlers) return answerPage(request, async (ctx) => notFoundPage(pageFrame(ctx, 'subject', null)));
  const handler: StepHandler | undefined = handlers[request.method as 'GET' | 'POST'];
  if (!handler) {
    const allow = Object.keys(handlers).join(', ');
    return Promise.resolve(new Response(null, { status: 405, headers: { Allow: allow } }));
  }
  return handler(request, { publicId: params.publicId, rest: params.rest ?? [] });
}
