import ipaddr from 'ipaddr.js';

/**
 * The key a client address is limited under. An IPv6 client is limited per /64: one subscriber
 * line usually gets a whole /64 (or more) and can pick any address in it, so a per-address
 * limit would not limit anyone. IPv4 stays per address.
 */
export function addressLimitKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const groups = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${groups.map((g) => g.toString(16)).join(':')}::/64`;
}
