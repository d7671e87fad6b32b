import { describe, expect, it } from 'vitest';
import { redirectUriProblem } from './redirect-uris';

describe('redirect URIs a client may register', () => {
  it('takes absolute https URLs, with a path and a query', () => {
    expect(redirectUriProblem('https://acme.okta.com/idp/identity-verification/callback', true)).toBeNull();
    expect(redirectUriProblem('https://rp.example/cb?tenant=1', true)).toBeNull();
  });

  it('takes http only to a loopback host, and only for a test-mode client', () => {
    for (const uri of ['http://localhost:3000/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]/cb']) {
      expect(redirectUriProblem(uri, false), uri).toBeNull();
      expect(redirectUriProblem(uri, true), uri).toMatch(/only a test-mode client/);
    }
    expect(redirectUriProblem('http://rp.example/cb', false)).toMatch(/must use https/);
    expect(redirectUriProblem('http://localhost.evil.example/cb', false)).toMatch(/must use https/);
  });

  it('refuses fragments, credentials, other schemes, relative and overlong URIs', () => {
    expect(redirectUriProblem('https://rp.example/cb#x', false)).toMatch(/fragment/);
    expect(redirectUriProblem('https://user:pw@rp.example/cb', false)).toMatch(/user name or password/);
    expect(redirectUriProblem('javascript:alert(1)', false)).toMatch(/must use https/);
    expect(redirectUriProblem('/cb', false)).toMatch(/not an absolute URL/);
    expect(redirectUriProblem(`https://rp.example/${'a'.repeat(2000)}`, false)).toMatch(/longer than 2000/);
  });
});
