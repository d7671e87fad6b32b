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

  const nonPublicLiterals = [
    'https://127.0.0.1/in',
    'https://10.0.0.1/in',
    'https://172.20.0.1/in',
    'https://192.168.1.1/in',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.1.1/in',
    'https://0.0.0.0/in',
    'https://2130706433/in',
    'https://0x7f.1/in',
    'https://[::1]/in',
    'https://[fd00:ec2::254]/in',
    'https://[fe80::1]/in',
    'https://[::ffff:127.0.0.1]/in',
    'https://[::ffff:7f00:1]/in',
    'https://[::127.0.0.1]/in',
    'https://[::a9fe:a9fe]/in',
    'https://[::ffff:0:7f00:1]/in',
    'https://[64:ff9b::7f00:1]/in',
    'https://[64:ff9b:1::7f00:1]/in',
    'https://[2002:7f00:1::]/in',
    'https://[2001::7f00:1]/in',
  ];
  it.each(nonPublicLiterals)('refuses the non-public literal address in %s without echoing it', (url) => {
    let error: unknown;
    try {
      validateEndpointUrl(url, strict);
    } catch (caught) {
      error = caught;
    }
    expect(error).toEqual(expect.objectContaining({ appCode: 'INVALID_URL' }));
    const detail = (error as { detail: string }).detail;
    expect(detail).toMatch(/non-public address/);
    expect(detail).toMatch(/WEBHOOK_ALLOW_PRIVATE_NETWORKS=true/);
    expect(detail).not.toMatch(/\d{1,3}(?:\.\d{1,3}){3}/);
    expect(detail).not.toMatch(/(?:[0-9a-f]{0,4}:){2,}[0-9a-f]{0,4}/i);
  });

  it.each(nonPublicLiterals)('accepts %s where private networks are allowed', (url) => {
    expect(validateEndpointUrl(url, { allowPrivateNetworks: true })).toBe(new URL(url).toString());
  });

  it.each(['https://8.8.8.8/in', 'https://[2606:4700:4700::1111]/in', 'https://[::ffff:8.8.8.8]/in'])(
    'accepts the public literal address in %s',
    (url) => {
      expect(validateEndpointUrl(url, strict)).toBe(new URL(url).toString());
    },
  );

  // Names no public address can ever answer for: refused from the name alone, never resolved.
  const localOnlyNames = [
    'https://localhost/hook',
    'https://LOCALHOST./hook',
    'https://api.localhost/hook',
    'https://printer.local/hook',
    'https://hooks.corp.internal/hook',
    'https://router.home.arpa/hook',
    'https://resolver.arpa/hook',
    'https://hooks.test/hook',
    'https://no-such-host.invalid/hook',
    'https://hooks.example/hook',
    'https://hooks.alt/hook',
    'https://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/hook',
    'https://intranet-box/hook',
    'https://com./hook',
  ];
  it.each(localOnlyNames)('refuses %s, whose host only a local network could answer for', (url) => {
    let error: unknown;
    try {
      validateEndpointUrl(url, strict);
    } catch (caught) {
      error = caught;
    }
    expect(error).toEqual(expect.objectContaining({ appCode: 'INVALID_URL' }));
    const detail = (error as { detail: string }).detail;
    expect(detail).toMatch(/^url: names a host no public address can answer for \(/);
    expect(detail).toMatch(/npm run listen -- --forward-to/);
    expect(detail).toMatch(/WEBHOOK_ALLOW_PRIVATE_NETWORKS=true/);
  });

  it('says why each kind of name is refused, and that no port would help', () => {
    const detail = (url: string) => {
      try {
        validateEndpointUrl(url, strict);
      } catch (caught) {
        return (caught as { detail: string }).detail;
      }
      return 'accepted';
    };
    expect(detail('https://localhost:4000/hook')).toMatch(/"localhost" is kept for this machine itself/);
    expect(detail('https://printer.local/hook')).toMatch(/names under \.local are kept for multicast DNS/);
    expect(detail('https://intranet-box/hook')).toMatch(/a name without a dot/);
  });

  it.each(localOnlyNames)('accepts %s where private networks are allowed', (url) => {
    expect(validateEndpointUrl(url, { allowPrivateNetworks: true })).toBe(new URL(url).toString());
  });

  it.each([
    'https://example.com/hook',
    'https://hooks.example.org/hook',
    'https://localhost.example.com/hook',
    'https://local.acme.io/hook',
    'https://test.acme.io/hook',
    'https://hooks.internal.acme.io/hook',
    'https://xn--bcher-kva.example.net/hook',
  ])('accepts %s: a public name, whatever words it holds', (url) => {
    expect(validateEndpointUrl(url, strict)).toBe(new URL(url).toString());
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
