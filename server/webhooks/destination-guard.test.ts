import { describe, expect, it } from 'vitest';
import { guardedLookup, refusedAddressReason } from './destination-guard';

describe('refusedAddressReason', () => {
  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'reserved'],
    // IPv4 inside IPv6: mapped (dotted and hex), NAT64 and 6to4 forms carry the IPv4 class.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['not-an-ip', 'not an IP address'],
  ];
  it.each(refused)('refuses %s as %s', (address, reason) => {
    expect(refusedAddressReason(address)).toBe(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(refusedAddressReason(address)).toBeNull();
    },
  );
});

describe('guardedLookup', () => {
  const lookup = (allowPrivate: boolean, host: string) =>
    new Promise<{ error: Error | null; address: unknown }>((resolve) => {
      guardedLookup(allowPrivate)(host, { all: true }, (error, address) => resolve({ error, address }));
    });

  it('refuses a name that resolves to loopback, before any connection', async () => {
    const { error } = await lookup(false, 'localhost');
    expect(error?.message).toMatch(/destination refused: localhost resolves to loopback address/);
  });

  it('hands over exactly the checked addresses when private networks are allowed', async () => {
    const { error, address } = await lookup(true, 'localhost');
    expect(error).toBeNull();
    expect(Array.isArray(address) && address.length > 0).toBe(true);
  });
});
