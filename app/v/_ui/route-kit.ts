import type { Db } from '@/db/client';
import { env } from '@/server/lib/env';
import { runtime } from '@/server/runtime';
import {
  CSRF_COOKIE,
  csrfCookieHeader,
  csrfToken,
  csrfValid,
  newCsrfNonce,
  readCookie,
} from '@/server/verification/csrf';
import { findVerificationCase, type VerificationCase } from '@/server/verification/find-verification-case';
import {
  type IdentityProvider,
  identityProviderFromEnv,
} from '@/server/verification/identity/identity-provider';
import { type SmsSender, smsSenderFromEnv } from '@/server/verification/sms/sms-sender';
import { withNotice } from './notices';
import { notFoundPage, seeOther } from './respond';

export async function database(): Promise<Db> {
  return (await runtime()).database.db;
}

export async function loadCase(publicId: string): Promise<VerificationCase | null> {
  return findVerificationCase(await database(), publicId);
}

let sms: SmsSender | undefined;
let identity: IdentityProvider | undefined;

export function smsSender(): SmsSender {
  sms ??= smsSenderFromEnv(env());
  return sms;
}

export function identityProvider(): IdentityProvider {
  identity ??= identityProviderFromEnv(env());
  return identity;
}

function allowedOrigins(): string[] {
  const config = env();
  return [new URL(config.VERIFY_URL_BASE).origin, new URL(config.BASE_URL).origin];
}

function isHttps(request: Request): boolean {
  const forwarded = request.headers.get('x-forwarded-proto');
  return (forwarded ?? new URL(request.url).protocol.replace(':', '')) === 'https';
}

/** The form token for this visitor and case; a first visit also gets its cookie. */
export function csrfFor(request: Request, found: VerificationCase): { token: string; setCookie?: string } {
  const existing = readCookie(request, CSRF_COOKIE);
  const nonce = existing && /^[\w-]{24}$/.test(existing) ? existing : newCsrfNonce();
  const token = csrfToken(found.record.id, found.record.publicId, nonce);
  return nonce === existing ? { token } : { token, setCookie: csrfCookieHeader(nonce, isHttps(request)) };
}

/**
 * Reads a posted form after the CSRF checks; a form that fails them is not acted on and the visitor
 * is sent back to a fresh page (`back`) to try again.
 */
export async function readProtectedForm(
  request: Request,
  found: VerificationCase,
  back: string,
): Promise<FormData | Response> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return seeOther(withNotice(back, 'form-expired'));
  }
  const ids = { caseId: found.record.id, publicId: found.record.publicId };
  if (!csrfValid(request, form, ids, allowedOrigins())) return seeOther(withNotice(back, 'form-expired'));
  return form;
}

export function field(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}

/** What a handler under /v/<id> gets once the case is known to exist. */
export interface CaseRequest {
  request: Request;
  found: VerificationCase;
  publicId: string;
  /** The case's page, where every step's answer redirects. */
  back: string;
}

/**
 * A route handler under /v/<id>: unknown and malformed ids get the same not-found page before the
 * handler runs.
 */
export function caseRoute(handler: (req: CaseRequest) => Promise<Response>) {
  return async (request: Request, context: { params: Promise<{ publicId: string }> }): Promise<Response> => {
    const { publicId } = await context.params;
    const found = await loadCase(publicId);
    if (!found) return notFoundPage();
    return handler({ request, found, publicId, back: `/v/${publicId}` });
  };
}
