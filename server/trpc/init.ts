import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { authenticateApiKey, bearerToken } from '../auth/api-keys';
import type { RequestContext } from './context';
import { AppError, toWireError } from './errors';

/**
 * tRPC is the single source of behaviour: the REST facade publishes these procedures under /v1
 * and the console calls them directly. Errors carry the app's code to both.
 */
const t = initTRPC
  .meta<OpenApiMeta<{ successStatus?: number }>>()
  .context<RequestContext>()
  .create({
    errorFormatter({ shape, error }) {
      const wire = toWireError(error);
      return {
        ...shape,
        message: wire.body.detail,
        data: { ...shape.data, appCode: wire.body.code, stack: undefined },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

function applyHeaders(ctx: RequestContext, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) ctx.responseHeaders.set(name, value);
}

/** Unauthenticated routes are limited per client address. */
export const publicProcedure = t.procedure.use(async ({ ctx, next }) => {
  const limit = await ctx.rateLimiters.consume('address', ctx.clientAddress);
  applyHeaders(ctx, limit.headers);
  return next();
});

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="vouch"' };

/**
 * Bearer API key → team. Every query below this point is scoped to `ctx.teamId`. Reads and writes
 * draw on separate per-team budgets shared by all of the team's keys.
 */
export const apiKeyProcedure = t.procedure.use(async ({ ctx, next, type }) => {
  const token = bearerToken(ctx.requestHeaders.get('authorization'));
  const key = token ? await authenticateApiKey(ctx.db, token, ctx.clock) : null;
  if (!key) {
    // Failed attempts spend the caller's address budget, so keys cannot be guessed at speed.
    await ctx.rateLimiters.consume('address', ctx.clientAddress);
    throw new AppError(
      'UNAUTHORIZED',
      token ? 'The API key is invalid or has been revoked.' : undefined,
      UNAUTHORIZED_HEADERS,
    );
  }
  const limit = await ctx.rateLimiters.consume(type === 'query' ? 'read' : 'write', key.teamId);
  applyHeaders(ctx, limit.headers);
  return next({ ctx: { teamId: key.teamId, apiKeyId: key.keyId } });
});
