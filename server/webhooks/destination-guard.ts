import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Address classes a webhook may never reach (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is on): a
 * customer-supplied URL must not become a way into our own network or a cloud metadata service.
 */
const RANGES: Array<{ reason: string; family: 'ipv4' | 'ipv6'; network: string; prefix: number }> = [
  { reason: 'metadata', family: 'ipv4', network: '169.254.169.254', prefix: 32 },
  { reason: 'metadata', family: 'ipv4', network: '100.100.100.200', prefix: 32 },
  { reason: 'metadata', family: 'ipv6', network: 'fd00:ec2::254', prefix: 128 },
  { reason: 'unspecified', family: 'ipv4', network: '0.0.0.0', prefix: 8 },
  { reason: 'loopback', family: 'ipv4', network: '127.0.0.0', prefix: 8 },
  { reason: 'private', family: 'ipv4', network: '10.0.0.0', prefix: 8 },
  { reason: 'private', family: 'ipv4', network: '172.16.0.0', prefix: 12 },
  { reason: 'private', family: 'ipv4', network: '192.168.0.0', prefix: 16 },
  { reason: 'link-local', family: 'ipv4', network: '169.254.0.0', prefix: 16 },
  { reason: 'cgnat', family: 'ipv4', network: '100.64.0.0', prefix: 10 },
  { reason: 'multicast', family: 'ipv4', network: '224.0.0.0', prefix: 4 },
  { reason: 'reserved', family: 'ipv4', network: '240.0.0.0', prefix: 4 },
  { reason: 'reserved', family: 'ipv4', network: '192.0.0.0', prefix: 24 },
  { reason: 'reserved', family: 'ipv4', network: '192.0.2.0', prefix: 24 },
  { reason: 'reserved', family: 'ipv4', network: '198.18.0.0', prefix: 15 },
  { reason: 'reserved', family: 'ipv4', network: '198.51.100.0', prefix: 24 },
  { reason: 'reserved', family: 'ipv4', network: '203.0.113.0', prefix: 24 },
  { reason: 'unspecified', family: 'ipv6', network: '::', prefix: 128 },
  { reason: 'loopback', family: 'ipv6', network: '::1', prefix: 128 },
  { reason: 'private', family: 'ipv6', network: 'fc00::', prefix: 7 },
  { reason: 'private', family: 'ipv6', network: 'fec0::', prefix: 10 },
  { reason: 'link-local', family: 'ipv6', network: 'fe80::', prefix: 10 },
  { reason: 'multicast', family: 'ipv6', network: 'ff00::', prefix: 8 },
  { reason: 'reserved', family: 'ipv6', network: '100::', prefix: 64 },
  { reason: 'reserved', family: 'ipv6', network: '2001:db8::', prefix: 32 },
];

const lists = RANGES.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { reason: range.reason, family: range.family, list };
});

/** The IPv4 address an IPv6 address carries: mapped (::ffff:a.b.c.d), compatible, NAT64 or 6to4. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = lower.match(/^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted?.[1]) return dotted[1];
  const hex = lower.match(/^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  const sixToFour = lower.match(/^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4}):/);
  const parts = hex ?? sixToFour;
  if (!parts?.[1] || !parts[2]) return null;
  const high = Number.parseInt(parts[1], 16);
  const low = Number.parseInt(parts[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/**
 * Why an address is refused as a webhook destination, or null when it is a public address.
 * Anything that is not an IP address at all is refused too.
 */
export function refusedAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner) return refusedAddressReason(inner);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const entry of lists) {
    if (entry.family === type && entry.list.check(address, type)) return entry.reason;
  }
  return null;
}

export class RefusedDestinationError extends Error {}

/**
 * A `lookup` for sockets: resolves the host, refuses the whole answer if any address is in a
 * forbidden class, and hands the socket exactly the addresses it checked. The connection goes to
 * a checked address, so a DNS answer that changes between check and connect (rebinding) cannot
 * slip through.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    dnsLookup(hostname, { all: true, family }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!allowPrivate) {
        for (const { address } of addresses) {
          const reason = refusedAddressReason(address);
          if (reason) {
            return callback(
              new RefusedDestinationError(
                `destination refused: ${hostname} resolves to ${reason} address ${address}`,
              ),
              [],
            );
          }
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
