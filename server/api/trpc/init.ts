import { initTRPC } from '@trpc/server';
import { ClientGoneError, toTrpcError, toWireError } from '@/server/api/error-table';
import type { AuditActor } from '@/server/audit/record-audit';
import { apiKeyLabel, authenticateApiKey, bearerToken } from '@/server/auth/api-keys';
import { consoleAuth } from '@/server/auth/console-auth';
import { canManage, passwordChangeRequired, resolveMembership } from '@/server/auth/team-members';
import { readCookie } from '@/server/platform/cookies';
import { budgetKey, type DataScope } from '@/server/platform/data-scope';
import { databaseUnavailableError, isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { AppError, appErrorIn } from '@/server/platform/errors';
import { describeJsonInputProblem, jsonInputProblem } from '@/server/platform/json-input';
import { currentRequestScope } from '@/server/platform/request-scope';
import { inSpan, spanFailed } from '@/server/platform/tracing';
import type { RequestContext } from './context';
import type { ProcedureMeta } from './procedure-meta';

/**
 * tRPC is the single source of behaviour: the REST facade publishes these procedures under /v1
 * and the console calls them directly. Errors carry the app's code to both.
 */
const t = initTRPC
  .meta<ProcedureMeta>()
  .context<RequestContext>()
  .create({
    errorFormatter({ shape, error }) {
      const wire = toWireError(error);
      return {
        ...shape,
        message: wire.body.detail,
        data: {
          ...shape.data,
          appCode: wire.body.code,
          // The console shows it with the error, so a report to support can name the request.
          requestId: currentRequestScope()?.requestId,
          stack: undefined,
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** What an application error or a lost database means on the wire; anything else as it is. */
function onTheWire(error: unknown): unknown {
  const appError = appErrorIn(error);
  if (appError) return toTrpcError(appError);
  if (isDatabaseUnavailable(error)) return toTrpcError(databaseUnavailableError());
  return error;
}

/**
 * Runs a procedure's middlewares and resolver (`run`) in a span of its own (tracing on), under the
 * request's: `rpc.method` is its path. A failure leaves as its wire error (onTheWire), whether a
 * later middleware returned it or `run` threw it.
 */
async function traced<Outcome extends { ok: boolean; error?: unknown }>(
  path: string,
  type: string,
  run: () => Promise<Outcome>,
): Promise<Outcome> {
  const result = await inSpan(
    `trpc ${path}`,
    { attributes: { 'rpc.system.name': 'trpc', 'rpc.method': path, 'vouch.trpc.type': type } },
    async (span) => {
      let outcome: Outcome;
      try {
        outcome = await run();
      } catch (error) {
        if (span) spanFailed(span, error);
        throw onTheWire(error);
      }
      if (span && !outcome.ok) spanFailed(span, outcome.error);
      return outcome;
    },
  );
  if (result.ok) return result;
  const wire = onTheWire(result.error);
  if (wire !== result.error) throw wire;
  return result;
}

/**
 * The base of every procedure, where the app's errors become tRPC's: an AppError (thrown by a
 * middleware below, a procedure or domain code) goes out with its table's code, so the console
 * gets its HTTP status; while the database cannot be reached, whatever failed on the way (a
 * rate-limit count, a key lookup, the procedure's own statements) is answered 503 with
 * Retry-After, over REST and to the console alike, instead of a 500.
 */
const procedure = t.procedure.use(({ next, path, type }) => traced(path, type, next));

function refuseControlCharactersIn(input: unknown): void {
  const problem = jsonInputProblem(input);
  if (problem) {
    throw new AppError(
      problem.kind === 'too_deep' ? 'INVALID_REQUEST' : 'VALIDATION_ERROR',
      describeJsonInputProblem(problem),
    );
  }
}

const refuseControlCharacters = t.middleware(async ({ getRawInput, next }) => {
  refuseControlCharactersIn(await getRawInput());
  return next();
});

function applyHeaders(ctx: RequestContext, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) ctx.responseHeaders.set(name, value);
}

/** Unauthenticated routes are limited per client address. */
export const publicProcedure = procedure
  .use(async ({ ctx, next }) => {
    const limit = await ctx.rateLimiters.consume('address', ctx.clientAddress);
    applyHeaders(ctx, limit.headers);
    return next();
  })
  .use(refuseControlCharacters);

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="vouch"' };

/**
 * Bearer API key → team and mode. Every query of cases, events, endpoints and deliveries below this
 * point is scoped to `ctx.scope` (the key's team, live or test); team-wide reads (usage, billing)
 * use `ctx.teamId`. Reads and writes draw on separate budgets shared by all of the team's keys of
 * that mode.
 */
/**
 * An API key's procedures: one middleware (tRPC copies its options at every layer, and every
 * `/v1` request passes here) that traces, authenticates the key spending its team's budget, and
 * refuses control characters in the input, before the procedure's own input checks.
 */
export const apiKeyProcedure = t.procedure.use(({ ctx, next, path, type, getRawInput }) =>
  traced(path, type, async () => {
    const token = bearerToken(ctx.requestHeaders.get('authorization'));
    const bucket = type === 'query' ? 'read' : 'write';
    // The key's look-up spends its team's budget in the same round trip; the limiter judges it.
    const key = token
      ? await authenticateApiKey(ctx.db, token, ctx.clock, ctx.rateLimiters.spendIn(bucket))
      : null;
    if (!key || !token) {
      // Failed attempts spend the caller's address budget, so keys cannot be guessed at speed.
      const limit = await ctx.rateLimiters.consume('address', ctx.clientAddress);
      applyHeaders(ctx, limit.headers);
      throw new AppError(
        'UNAUTHORIZED',
        token ? 'The API key is invalid or has been revoked.' : undefined,
        UNAUTHORIZED_HEADERS,
      );
    }
    const limit = await ctx.rateLimiters.settle(
      bucket,
      budgetKey(key.scope),
      bucket === 'read' ? key.budgets.read : key.budgets.write,
      key.spent,
    );
    applyHeaders(ctx, limit.headers);
    if (ctx.clientGone.aborted) throw new ClientGoneError();
    refuseControlCharactersIn(await getRawInput());
    // What the key changes is audited like a console user's changes, the key named as the actor.
    const actor: AuditActor = {
      userId: null,
      email: `API key ${apiKeyLabel(token)}`,
      ipAddress: ctx.clientAddress,
      userAgent: ctx.requestHeaders.get('user-agent'),
    };
    return next({ ctx: { teamId: key.scope.teamId, scope: key.scope, apiKeyId: key.keyId, actor } });
  }),
);

export const CONSOLE_TEAM_COOKIE = 'vouch_team';
/** The console's live/test switch: `test` shows and makes test-mode data; anything else is live. */
export const CONSOLE_MODE_COOKIE = 'vouch_mode';

const TEAM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The team the console's picker last chose (unchecked: callers check membership). A value that
 * is not a team id (a cookie edited or mangled on the way) is ignored, as if there were none.
 */
export function readConsoleTeamCookie(headers: Headers): string | null {
  const teamId = readCookie(headers.get('cookie'), CONSOLE_TEAM_COOKIE);
  return teamId !== null && TEAM_ID.test(teamId) ? teamId : null;
}

/** Whether the console shows live data: only the exact value `test` switches to test mode. */
export function readConsoleLivemode(headers: Headers): boolean {
  return readCookie(headers.get('cookie'), CONSOLE_MODE_COOKIE) !== 'test';
}

/**
 * A console user signed in through better-auth (session cookie). Used alone only by the few calls
 * that work before a team is chosen or a one-time password is replaced.
 */
export const signedInProcedure = procedure
  .use(async ({ ctx, next }) => {
    const auth = await consoleAuth(ctx.db, ctx.env);
    const { headers: sessionHeaders, response: session } = await auth.api.getSession({
      headers: ctx.requestHeaders,
      returnHeaders: true,
    });
    // A session used more than a day after it was last extended is extended again in the database
    // and its cookie re-issued. Without passing that cookie on, the browser would drop the session
    // when the first cookie expires, a week after sign-in, however active the user has been.
    for (const cookie of sessionHeaders.getSetCookie()) ctx.responseHeaders.append('Set-Cookie', cookie);
    if (!session) throw new AppError('UNAUTHORIZED', 'You are not signed in, or your session has ended.');
    const user = { id: session.user.id, email: session.user.email, name: session.user.name };
    // Per person, not per address: a script with a stolen session gets no more than a person would.
    const limit = await ctx.rateLimiters.consume('console_user', user.id);
    applyHeaders(ctx, limit.headers);
    const actor: AuditActor = {
      userId: user.id,
      email: user.email,
      ipAddress: ctx.clientAddress,
      userAgent: ctx.requestHeaders.get('user-agent'),
    };
    return next({ ctx: { user, actor, signedInAt: session.session.createdAt } });
  })
  .use(refuseControlCharacters);

/**
 * Signed in, one-time password replaced, and a member of the team the request acts on. Every
 * query below this point is scoped to `ctx.teamId`, and the mode-bound data (cases, events,
 * endpoints, deliveries) to `ctx.scope`, the mode the console's switch shows; `ctx.role` says
 * what the user may do there.
 */
export const sessionProcedure = signedInProcedure.use(async ({ ctx, next }) => {
  if (await passwordChangeRequired(ctx.db, ctx.user.id)) {
    throw new AppError('FORBIDDEN', 'Choose a new password before using the console.');
  }
  const membership = await resolveMembership(ctx.db, ctx.user.id, readConsoleTeamCookie(ctx.requestHeaders));
  if (!membership) throw new AppError('FORBIDDEN', 'You are not a member of any team.');
  const scope: DataScope = {
    teamId: membership.teamId,
    livemode: readConsoleLivemode(ctx.requestHeaders),
  };
  return next({
    ctx: { teamId: membership.teamId, scope, teamName: membership.teamName, role: membership.role },
  });
});

/** Anything that changes a team's setup: owners and admins only; viewers are refused here. */
export const managerProcedure = sessionProcedure.use(({ ctx, next }) => {
  if (!canManage(ctx.role)) {
    throw new AppError('FORBIDDEN', 'Your role in this team is read-only (viewer); ask an admin.');
  }
  return next();
});
