import { describe, expect, it } from 'vitest';
import { addressLimitKey } from './address-key';

describe('addressLimitKey', () => {
  it('keeps IPv4 per address', () => {
    expect(addressLimitKey('203.0.113.5')).toBe('203.0.113.5');
    expect(addressLimitKey('::ffff:203.0.113.5')).toBe('203.0.113.5');
  });

  it('groups IPv6 by /64', () => {
    const key = addressLimitKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    expect(addressLimitKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(key);
    expect(addressLimitKey('2001:0db8:0001:0002:abcd::9')).toBe(key);
    expect(addressLimitKey('2001:db8:1:3::1')).not.toBe(key);
  });

  it('leaves what is not an address as it is', () => {
    expect(addressLimitKey('unknown')).toBe('unknown');
  });
});
