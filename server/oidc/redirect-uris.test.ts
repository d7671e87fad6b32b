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

  it('holds each rule at its edge: 2000 characters, an empty fragment, a user name alone, another scheme to a loopback host', () => {
    const base = 'https://rp.example/';
    expect(redirectUriProblem(`${base}${'a'.repeat(2000 - base.length)}`, true)).toBeNull();
    expect(redirectUriProblem(`${base}${'a'.repeat(2001 - base.length)}`, true)).toBe(
      'is longer than 2000 characters',
    );
    expect(redirectUriProblem('https://rp.example/cb#', false)).toBe('must not have a fragment (#…)');
    expect(redirectUriProblem('https://user@rp.example/cb', false)).toBe(
      'must not carry a user name or password',
    );
    expect(redirectUriProblem('https://:pw@rp.example/cb', false)).toBe(
      'must not carry a user name or password',
    );
    expect(redirectUriProblem('ftp://localhost/cb', false)).toBe(
      'must use https (http only to localhost, 127.0.0.1 or [::1], for a test-mode client)',
    );
    expect(redirectUriProblem('http://localhost/cb', true)).toBe(
      'uses http, which only a test-mode client may (to a loopback host)',
    );
  });
});
