import { describe, expect, it } from 'vitest';
import { readCookie, setCookieHeader } from './cookies';

describe('readCookie', () => {
  it('reads one cookie among several, the first of a repeated name, trimmed', () => {
    expect(readCookie('a=1; vouch_mode=test ;b=2', 'vouch_mode')).toBe('test');
    expect(readCookie('vouch_mode=test; vouch_mode=live', 'vouch_mode')).toBe('test');
    expect(readCookie('xvouch_mode=test', 'vouch_mode')).toBeNull();
  });

  it('counts a missing header, a missing cookie and an empty value as none', () => {
    expect(readCookie(null, 'a')).toBeNull();
    expect(readCookie('', 'a')).toBeNull();
    expect(readCookie('b=1', 'a')).toBeNull();
    expect(readCookie('a=; b=1', 'a')).toBeNull();
  });
});

describe('setCookieHeader', () => {
  const attributes = (header: string) => header.split('; ').sort();

  it('is HttpOnly and SameSite=Lax, with its path and age, Secure only when asked', () => {
    expect(
      attributes(setCookieHeader('vouch_team', 'x', { path: '/', maxAgeSeconds: 31536000, secure: true })),
    ).toEqual(['HttpOnly', 'Max-Age=31536000', 'Path=/', 'SameSite=Lax', 'Secure', 'vouch_team=x']);
    expect(attributes(setCookieHeader('vouch_csrf', 'n-_1', { path: '/v', secure: false }))).toEqual([
      'HttpOnly',
      'Path=/v',
      'SameSite=Lax',
      'vouch_csrf=n-_1',
    ]);
  });
});
