import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * Which peers are reverse proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES: addresses,
 * CIDR ranges, or proxy-addr's names `loopback`, `linklocal`, `uniquelocal`). Nothing is trusted
 * by default: the socket's peer is the client. Throws on a value that is not an address or range.
 */
export function compileProxyTrust(trustedProxies: readonly string[]): ProxyTrust {
  return proxyaddr.compile([...trustedProxies]);
}

/**
 * The client's address: the socket's peer, unless that peer is a trusted proxy; then the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy (entries further left are
 * whatever the client wrote). IPv4-mapped IPv6 (a dual-stack socket's `::ffff:a.b.c.d`) is
 * written as IPv4, so one client has one address.
 */
export function clientAddressOf(req: IncomingMessage, trust: ProxyTrust): string {
  if (!req.socket.remoteAddress) return 'unknown';
  const address = proxyaddr(req, trust);
  return ipaddr.isValid(address) ? ipaddr.process(address).toString() : 'unknown';
}
