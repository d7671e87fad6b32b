import { readMultipartUpload, type UploadedFile } from '@/server/api/http/multipart-upload';
import {
  API_BODY_LIMIT_BYTES,
  readRequestBody,
  UPLOAD_BODY_LIMIT_BYTES,
} from '@/server/api/http/request-body';
import { runtimeRateLimiters } from '@/server/api/trpc/context';
import { providerFlowOf } from '@/server/application/oidc/provider-flow';
import { findSubjectCase } from '@/server/application/verification/open-case-page';
import type { SubjectStepDeps } from '@/server/application/verification/subject-deps';
import type { VerificationCase } from '@/server/cases/case-repository';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import type { Env } from '@/server/platform/env';
import { isAppError } from '@/server/platform/errors';
import { runtime } from '@/server/platform/runtime';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { csrfToken, newCsrfNonce, UPLOAD_CSRF_PARAM } from '@/server/verification/csrf';
import {
  csrfCookieHeader,
  csrfTokenValid,
  csrfValid,
  readCsrfNonce,
  sameOriginRequest,
} from './form-protection';
import { withNotice } from './notices';
import { isHttps, languagePagePath, pageLanguage, type Reader } from './page-language';
import { otherBrowserPage, readFlowBinding } from './provider-flow-pages';
import { bodyTooLargePage, notFoundPage, type PageFrame, seeOther, unavailablePage } from './respond';

/** What a page handler hands its use case, taken from the process's runtime once per request. */
export interface PageContext extends SubjectStepDeps {
  config: Env;
  /** Where the subject's pages are served (VERIFY_URL_BASE). */
  pageBase: string;
  request: Request;
  /** The budgets a page's costly requests spend (a case's passkey ceremonies). */
  rateLimiters: RateLimiters;
}

async function pageContext(request: Request): Promise<PageContext> {
  const rt = await runtime();
  return {
    db: rt.database.db,
    clock: rt.clock,
    jobs: rt.jobProducer,
    providers: rt.providers,
    config: rt.env,
    pageBase: rt.env.VERIFY_URL_BASE,
    request,
    rateLimiters: runtimeRateLimiters(rt),
  };
}

/**
 * The frame of a page for `reader` about `found` (or, with null, for no known case): its
 * language, as pageLanguage chooses it, and the team's brand. `path` is where the language switch
 * leads, the page itself unless given.
 */
export function pageFrame(
  ctx: PageContext,
  reader: Reader,
  found: VerificationCase | null,
  path = new URL(ctx.request.url).pathname,
): PageFrame {
  const language = pageLanguage(ctx.request, ctx.config, reader, found);
  return {
    t: language.t,
    team: found?.team ?? null,
    path,
    languages: found ? { chooser: languagePagePath(found.record.publicId, path) } : 'list',
    cookies: language.setCookie ? [language.setCookie] : [],
  };
}

/**
 * Every page under /v: while the database cannot be reached, the subject gets a plain "try again
 * in a moment" page (503 with Retry-After) instead of an error.
 */
export async function answerPage(
  request: Request,
  handler: (ctx: PageContext) => Promise<Response>,
): Promise<Response> {
  const ctx = await pageContext(request);
  try {
    return await handler(ctx);
  } catch (error) {
    if (isDatabaseUnavailable(error)) {
      return unavailablePage(pageFrame(ctx, 'subject', null), DATABASE_RETRY_AFTER_SECONDS);
    }
    throw error;
  }
}

/** What a step's handler under /v/<id> gets once the case is known to exist. */
export interface CaseRequest {
  ctx: PageContext;
  found: VerificationCase;
  /** The case's page, where every step's answer redirects. */
  back: string;
}

/**
 * A step under /v/<id>: unknown and malformed ids get the same not-found page before it runs. A
 * case an identity provider's flow opened takes its steps only from the browser that started the
 * flow; any other is told to start again from its sign-in, and nothing is done.
 */
export function answerCaseStep(
  request: Request,
  publicId: string,
  handler: (req: CaseRequest) => Promise<Response>,
): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const found = await findSubjectCase(ctx.db, publicId);
    if (!found) return notFoundPage(pageFrame(ctx, 'subject', null));
    const back = `/v/${publicId}`;
    const flow = await providerFlowOf(ctx.db, found.record.id, readFlowBinding(request), ctx.clock());
    if (flow && !flow.boundHere) return otherBrowserPage(pageFrame(ctx, 'subject', found, back), flow);
    return handler({ ctx, found, back });
  });
}

function allowedOrigins(config: Env): string[] {
  return [new URL(config.VERIFY_URL_BASE).origin, new URL(config.BASE_URL).origin];
}

/** The form token for this visitor and case; a first visit also gets its cookie. */
export function csrfFor(request: Request, found: VerificationCase): { token: string; setCookie?: string } {
  const existing = readCsrfNonce(request);
  const nonce = existing && /^[\w-]{24}$/.test(existing) ? existing : newCsrfNonce();
  const token = csrfToken(found.record.id, found.record.publicId, nonce);
  return nonce === existing ? { token } : { token, setCookie: csrfCookieHeader(nonce, isHttps(request)) };
}

/** A form body read within `limit` (counted as it arrives). */
async function readForm(request: Request, limit: number): Promise<FormData | 'too-large' | 'unreadable'> {
  let body: Uint8Array<ArrayBuffer>;
  try {
    body = await readRequestBody(request, limit);
  } catch (error) {
    return isAppError(error) && error.appCode === 'PAYLOAD_TOO_LARGE' ? 'too-large' : 'unreadable';
  }
  try {
    const type = request.headers.get('content-type') ?? '';
    return await new Response(body, { headers: { 'Content-Type': type } }).formData();
  } catch {
    return 'unreadable';
  }
}

function formExpired(back: string): Response {
  return seeOther(withNotice(back, 'form-expired'));
}

/**
 * Reads a posted form after the CSRF checks; a form that fails them is not acted on and the visitor
 * is sent back to a fresh page (`back`) to try again. A request from another site is refused
 * before its body is read.
 */
export async function readProtectedForm(
  request: Request,
  { ctx, found }: Pick<CaseRequest, 'ctx' | 'found'>,
  back: string,
  reader: Reader = 'subject',
): Promise<FormData | Response> {
  const origins = allowedOrigins(ctx.config);
  if (!sameOriginRequest(request, origins)) return formExpired(back);
  const form = await readForm(request, API_BODY_LIMIT_BYTES);
  if (form === 'too-large') return bodyTooLargePage(pageFrame(ctx, reader, found, back), back);
  if (!(form instanceof FormData)) return formExpired(back);
  const ids = { caseId: found.record.id, publicId: found.record.publicId };
  if (!csrfValid(request, form, ids, origins)) return formExpired(back);
  return form;
}

/**
 * The identity upload: its token travels in the form's URL, so both CSRF checks pass before any
 * of the body is read; the form is then parsed as it streams, each picture kept only up to
 * `maxFileBytes` and the whole body up to 25 MB. `tooLarge` answers a picture over its limit (the
 * subject chose too big a file); a body over 25 MB is refused with 413.
 */
export async function readProtectedUpload(
  request: Request,
  { ctx, found, back }: CaseRequest,
  options: { maxFileBytes: number; tooLarge: Response },
): Promise<Record<string, UploadedFile> | Response> {
  const ids = { caseId: found.record.id, publicId: found.record.publicId };
  const sent = new URL(request.url).searchParams.get(UPLOAD_CSRF_PARAM);
  if (!csrfTokenValid(request, sent, ids, allowedOrigins(ctx.config))) return formExpired(back);
  const upload = await readMultipartUpload(request, {
    maxFileBytes: options.maxFileBytes,
    maxFiles: 2,
    maxTotalBytes: UPLOAD_BODY_LIMIT_BYTES,
  });
  if (upload.ok) return upload.files;
  if (upload.why === 'body_too_large') return bodyTooLargePage(pageFrame(ctx, 'subject', found, back), back);
  return upload.why === 'part_too_large' ? options.tooLarge : formExpired(back);
}

/**
 * The header a page's script sends its form token in (a JSON body has no form field for it); not
 * `x-vouch-…`, which the web process keeps for its own and drops from a client's request.
 */
export const FORM_TOKEN_HEADER = 'x-csrf-token';

/** A JSON answer to a page's script. */
export function scriptAnswer(
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return Response.json(body, {
    status,
    headers: { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...headers },
  });
}

/**
 * A page script's JSON body, read within `limit` after the same CSRF checks as a form (the token in
 * FORM_TOKEN_HEADER): a request that fails them is answered 403 with where to go (`back`, a fresh
 * page), a body over the limit 413, one that is not a JSON object 400, before anything is done.
 */
export async function readProtectedJson(
  request: Request,
  { ctx, found, back }: CaseRequest,
  limit: number,
): Promise<Record<string, unknown> | Response> {
  const ids = { caseId: found.record.id, publicId: found.record.publicId };
  const token = request.headers.get(FORM_TOKEN_HEADER);
  if (!csrfTokenValid(request, token, ids, allowedOrigins(ctx.config))) {
    return scriptAnswer(403, { error: 'form_expired', location: withNotice(back, 'form-expired') });
  }
  let body: Uint8Array<ArrayBuffer>;
  try {
    body = await readRequestBody(request, limit);
  } catch (error) {
    if (isAppError(error) && error.appCode === 'PAYLOAD_TOO_LARGE') {
      return scriptAnswer(413, { error: 'payload_too_large', location: back });
    }
    return scriptAnswer(400, { error: 'invalid_request', location: back });
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8') || '{}');
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // answered below
  }
  return scriptAnswer(400, { error: 'invalid_request', location: back });
}

export function field(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}
