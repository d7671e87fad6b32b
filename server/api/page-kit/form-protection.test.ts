import { describe, expect, it } from 'vitest';
import { csrfToken } from '@/server/verification/csrf';
import { CSRF_COOKIE, csrfValid, readCsrfNonce, sameOriginRequest } from './form-protection';

const ids = { caseId: '6f1c2f4e-8a51-4c43-9d44-0d4f5d0c9a11', publicId: 'AbCdEfGhIjKlMnOp' };
const nonce = 'n0nce-n0nce-n0nce-n0nce1';

function post(headers: Record<string, string>): Request {
  return new Request('http://localhost:3000/v/AbCdEfGhIjKlMnOp/question', {
    method: 'POST',
    headers: { host: 'localhost:3000', ...headers },
  });
}

function form(token: string): FormData {
  const data = new FormData();
  data.set('csrf', token);
  return data;
}

describe('CSRF protection of the verification forms', () => {
  const good = csrfToken(ids.caseId, ids.publicId, nonce);
  const cookie = `other=1; ${CSRF_COOKIE}=${nonce}`;

  it('accepts a same-origin post whose token matches its cookie', () => {
    expect(csrfValid(post({ cookie, 'sec-fetch-site': 'same-origin' }), form(good), ids, [])).toBe(true);
    expect(csrfValid(post({ cookie, origin: 'http://localhost:3000' }), form(good), ids, [])).toBe(true);
  });

  it('refuses cross-site posts even with a valid token', () => {
    expect(csrfValid(post({ cookie, 'sec-fetch-site': 'cross-site' }), form(good), ids, [])).toBe(false);
    expect(csrfValid(post({ cookie, 'sec-fetch-site': 'same-site' }), form(good), ids, [])).toBe(false);
    expect(csrfValid(post({ cookie, origin: 'https://evil.example' }), form(good), ids, [])).toBe(false);
  });

  it('refuses a missing cookie, a missing or wrong token, and a token of another case', () => {
    const site = { 'sec-fetch-site': 'same-origin' };
    expect(csrfValid(post(site), form(good), ids, [])).toBe(false);
    expect(csrfValid(post({ ...site, cookie }), new FormData(), ids, [])).toBe(false);
    expect(csrfValid(post({ ...site, cookie }), form(`${good.slice(0, -1)}A`), ids, [])).toBe(false);
    const otherCase = csrfToken('0e5b8c57-3a9c-4a53-8f8c-2d6a7e1b0c22', ids.publicId, nonce);
    expect(csrfValid(post({ ...site, cookie }), form(otherCase), ids, [])).toBe(false);
    const otherNonce = csrfToken(ids.caseId, ids.publicId, 'another-nonce-abcdefghij');
    expect(csrfValid(post({ ...site, cookie }), form(otherNonce), ids, [])).toBe(false);
  });

  it('accepts the configured public origin behind a proxy', () => {
    const request = post({ origin: 'https://verify.example.com' });
    expect(sameOriginRequest(request, ['https://verify.example.com'])).toBe(true);
    expect(sameOriginRequest(request, [])).toBe(false);
  });

  it('reads one cookie among several', () => {
    expect(readCsrfNonce(post({ cookie }))).toBe(nonce);
    expect(readCsrfNonce(post({}))).toBeNull();
  });
});
