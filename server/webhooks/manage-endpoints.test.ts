import { describe, expect, it } from 'vitest';
import { retryDelaySeconds } from './attempt-delivery';
import { validateEndpointUrl, validateEvents } from './manage-endpoints';

const strict = { allowPrivateNetworks: false };

describe('validateEndpointUrl', () => {
  it('accepts HTTPS on the standard port', () => {
    expect(validateEndpointUrl('https://hooks.example.com/in', strict)).toBe('https://hooks.example.com/in');
    expect(validateEndpointUrl('https://hooks.example.com:443/in', strict)).toBe(
      'https://hooks.example.com/in',
    );
  });

  it.each([
    'http://hooks.example.com/',
    'https://hooks.example.com:8443/',
    'ftp://x/',
    'https://u:p@x.example/',
    'nope',
    '',
  ])('refuses %s with INVALID_URL', (url) => {
    expect(() => validateEndpointUrl(url, strict)).toThrow(
      expect.objectContaining({ appCode: 'INVALID_URL' }),
    );
  });

  it('accepts another port only where private networks are allowed (local receivers)', () => {
    expect(validateEndpointUrl('https://localhost:8443/in', { allowPrivateNetworks: true })).toBe(
      'https://localhost:8443/in',
    );
  });
});

describe('validateEvents', () => {
  it('dedupes known types and refuses unknown or missing ones', () => {
    expect(validateEvents(['case.closed', 'case.closed'])).toEqual(['case.closed']);
    for (const bad of [undefined, [], ['ping'], ['case.closed', 'case.reopened']]) {
      expect(() => validateEvents(bad)).toThrow(expect.objectContaining({ appCode: 'INVALID_EVENTS' }));
    }
  });
});

describe('retryDelaySeconds', () => {
  it('follows the schedule and repeats its last step when it is short', () => {
    const schedule = [30, 120, 900, 3600, 14400, 43200, 86400];
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelaySeconds(schedule, n))).toEqual(schedule);
    expect(retryDelaySeconds([5], 4)).toBe(5);
  });
});
