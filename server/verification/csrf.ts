import { createHmac, randomBytes } from 'node:crypto';

/**
 * The form token of the verification pages (cross-site request forgery protection; the request
 * checks live with the pages' transport, server/api/pages/form-protection.ts): the page sets a
 * random nonce in an HttpOnly cookie and puts HMAC(case key, public id + nonce) in each form. The
 * key is the case's internal id, which the page never shows, so another site can neither read nor
 * mint a valid token, and a token from one case does not work on another.
 */
export const CSRF_FIELD = 'csrf';
/**
 * The identity upload's form carries its token in its URL instead (this query parameter), so the
 * request is judged before its body of up to 25 MB is read.
 */
export const UPLOAD_CSRF_PARAM = 'csrf';

export function newCsrfNonce(): string {
  return randomBytes(18).toString('base64url');
}

export function csrfToken(caseId: string, publicId: string, nonce: string): string {
  return createHmac('sha256', caseId).update(`${publicId}.${nonce}`).digest('base64url');
}
