import { describe, expect, it } from 'vitest';
import { hasSessionCookie } from './session-cookie';

describe('hasSessionCookie', () => {
  it('finds the session cookie, Secure or not, among others', () => {
    expect(hasSessionCookie('vouch.session_token=abc.def')).toBe(true);
    expect(hasSessionCookie('vouch_mode=test; __Secure-vouch.session_token=abc.def; other=1')).toBe(true);
  });

  it('is false without it, or when it is empty (as a sign-out leaves it)', () => {
    expect(hasSessionCookie(null)).toBe(false);
    expect(hasSessionCookie('')).toBe(false);
    expect(hasSessionCookie('vouch_mode=test; vouch.session_data=x')).toBe(false);
    expect(hasSessionCookie('vouch.session_token=')).toBe(false);
    expect(hasSessionCookie('xvouch.session_token=abc')).toBe(false);
  });
});
