import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { logger } from '@/server/platform/logger';

/**
 * A webhook may reach global unicast addresses only (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is on):
 * a customer-supplied URL must not become a way into our own network or a cloud metadata service.
 *
 * The address classes are ipaddr.js's (`range()`): anything it names other than 'unicast' is
 * refused — loopback, private, linkLocal (which holds 169.254.169.254, the AWS/GCP/Azure metadata
 * address), carrierGradeNat (which holds Alibaba's 100.100.100.200), uniqueLocal (which holds
 * AWS's fd00:ec2::254), deprecatedSiteLocal, multicast, broadcast, unspecified, reserved (which
 * holds Oracle's 192.0.0.192 and 240/4), benchmarking, discard, as112, amt, orchid and the like.
 *
 * Embedded IPv4: an IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address itself to the
 * socket, so it is judged by that address. Every translation and tunnel form is refused outright
 * whatever IPv4 address it carries — rfc6145 (::ffff:0:a.b.c.d), rfc6052 (NAT64, both
 * 64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16), teredo (2001::/32) and
 * IPv4-compatible (::/96, below): what they reach depends on translators and relays we do not
 * control (a local NAT64 gateway turns 64:ff9b::7f00:1 into its own loopback), and a public
 * receiver has a plain address to give. (An IPv6-only deployment behind DNS64 would need the NAT64
 * forms judged by their IPv4 address instead.)
 */
const REFUSED_BY_HAND: Array<{ reason: string; cidr: [ipaddr.IPv4 | ipaddr.IPv6, number] }> = [
  // IPv4-compatible addresses (deprecated by RFC 4291): ipaddr.js names only :: and ::1 in ::/96
  // and calls the rest unicast, yet `https://[::127.0.0.1]/` (parsed as ::7f00:1) carries an
  // IPv4 address that some stacks still tunnel to (Linux's sit0 holds a route for ::/96).
  { reason: 'ipv4Compatible', cidr: ipaddr.parseCIDR('::/96') },
  // Azure's platform endpoint (WireServer, DNS, health probes): a public address by its range,
  // but it answers only from inside Azure, where it serves the VM's own platform configuration.
  { reason: 'metadata', cidr: ipaddr.parseCIDR('168.63.129.16/32') },
];

/**
 * IANA allocates global unicast IPv6 from 2000::/3 only; ipaddr.js calls every address outside
 * its named ranges 'unicast', including the rest of the space that IANA keeps reserved.
 */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * Why an address is refused as a webhook destination (a class name such as 'loopback', never the
 * address), or null when it is a global unicast address. Anything that is not an IP address at all
 * is refused too.
 */
export function refusedAddressReason(address: string): string | null {
  // node:net's parser decides what is an address: it is strict about the forms a socket accepts,
  // where ipaddr.js would also take octal and hexadecimal IPv4 shorthands.
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 4) return refusedReason(ipaddr.IPv4.parse(address));
  // ipaddr.js reads the dotted IPv6 form ::a.b.c.d as IPv4-mapped (::ffff:a.b.c.d) rather than
  // IPv4-compatible (it would allow ::8.8.8.8), and inet_ntop, behind dns.lookup, writes ::7f00:1
  // as ::127.0.0.1. The URL parser's serialiser writes every IPv6 address in hexadecimal, so
  // ipaddr.js only ever sees that form. A zone index (%eth0) names an interface, not part of the
  // address, and is left out of the check.
  const [withoutZone = address] = address.split('%');
  return refusedReason(ipaddr.IPv6.parse(new URL(`http://[${withoutZone}]/`).hostname.slice(1, -1)));
}

function refusedReason(address: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) {
    return refusedReason(address.toIPv4Address());
  }
  const range = address.range();
  if (range !== 'unicast') return range;
  for (const { reason, cidr } of REFUSED_BY_HAND) {
    if (address.kind() === cidr[0].kind() && address.match(cidr)) return reason;
  }
  if (address.kind() === 'ipv6' && !address.match(IPV6_GLOBAL_UNICAST)) return 'notGlobalUnicast';
  return null;
}

/** The IP address a URL names as its host (brackets removed from IPv6), or null for a host name. */
export function literalAddress(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) === 0 ? null : host;
}

/**
 * Domains whose names no public DNS answer can ever come from, so a webhook host under one of them
 * could only fail: the special-use names of IANA's registry (RFC 6761 and its successors) and
 * ICANN's `.internal`. Each maps to what it is for, in the words a refusal uses. `example.com`,
 * `.net` and `.org` are special-use too but are delegated and answer (IANA serves them), so they
 * are not here; nor are names ICANN has only deferred (`.corp`, `.home`, `.lan`), which are not
 * reserved for good.
 */
const LOCAL_ONLY_DOMAINS: ReadonlyMap<string, string> = new Map([
  ['localhost', 'this machine itself (RFC 6761)'],
  ['local', 'multicast DNS on a local network (RFC 6762)'],
  ['internal', 'private networks (reserved by ICANN in 2024)'],
  ['test', 'testing, and never delegated (RFC 6761)'],
  ['invalid', 'names that must never resolve (RFC 6761)'],
  ['example', 'documentation, and never delegated (RFC 6761)'],
  ['alt', 'name systems other than DNS (RFC 9476)'],
  ['onion', 'Tor onion services, reached only through Tor (RFC 7686)'],
  // RFC 3172: infrastructure only. Every special-use name under it is local: home.arpa (home
  // networks, RFC 8375), resolver.arpa, service.arpa, ipv4only.arpa, the private reverse zones.
  ['arpa', 'internet infrastructure, such as home.arpa for home networks (RFC 3172, RFC 8375)'],
]);

/**
 * Why a host name can never name a public webhook host, or null: it lies in a domain above, or
 * it has a single label (`intranet-box`), which only a local resolver's search list completes.
 * Judged from the name alone, resolving nothing: a lookup at creation would tell a customer which
 * internal names exist. (The delivery-time guard still resolves every other name.)
 */
export function localOnlyHostReason(hostname: string): string | null {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  const last = labels.at(-1) ?? '';
  const purpose = LOCAL_ONLY_DOMAINS.get(last);
  if (purpose)
    return labels.length === 1
      ? `"${last}" is kept for ${purpose}`
      : `names under .${last} are kept for ${purpose}`;
  if (labels.length === 1) return 'a name without a dot is completed by a local network’s resolver only';
  return null;
}

/** Where a developer's own machine cannot be reached, what to do instead. */
const DEVELOP_LOCALLY =
  'webhooks reach public addresses only; to receive them on your own machine, run `npm run listen -- --forward-to http://localhost:PORT/path` with an API key';

/**
 * What an attempt records when its host name leads to no public address: the name does not
 * resolve (or its resolver failed), or it resolves to an address refused above. One message for
 * every case, naming no address: it is shown to the customer (last_error, the attempt log, the
 * console), and "resolves to a non-public address" next to "ENOTFOUND" would tell anyone which of
 * our internal names exist. Operators find the reason in the log.
 */
export const UNREACHABLE_HOST_MESSAGE = `could not reach a public address for this host: its name does not resolve to one (${DEVELOP_LOCALLY})`;
/**
 * A URL whose host is a non-public IP address: saying so plainly tells nothing about our network
 * (the customer wrote the address), so it gets its own message.
 */
export const REFUSED_LITERAL_MESSAGE = `destination refused: the URL names a non-public address (${DEVELOP_LOCALLY})`;

export class RefusedDestinationError extends Error {}

/** The resolver the guard asks, as `dns.lookup` with `all: true` answers. */
export type ResolveAll = (
  hostname: string,
  options: { all: true; family: number },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** The attempt's error for a host with no public address; the reason (never an address) goes to the log. */
function unreachableHost(hostname: string, reason: string): RefusedDestinationError {
  logger.info('webhook host has no public address', { host: hostname, reason });
  return new RefusedDestinationError(UNREACHABLE_HOST_MESSAGE);
}

/**
 * A `lookup` for sockets: resolves the host once, refuses the whole answer if any address is not
 * a global unicast address, and hands the socket exactly the addresses it checked. The connection
 * goes to a checked address, so a DNS answer that changes between check and connect (rebinding)
 * cannot slip through. A name that does not resolve fails with the same error as one refused.
 * `resolveAll` is the system resolver except in tests.
 *
 * With private networks allowed nothing is refused, so the resolver's own error (ENOTFOUND…) is
 * passed on: a developer learns more from it, and there is nothing to hide.
 */
export function guardedLookup(allowPrivate: boolean, resolveAll: ResolveAll = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    resolveAll(hostname, { all: true, family }, (error, addresses) => {
      if (error) {
        return callback(allowPrivate ? error : unreachableHost(hostname, error.code ?? error.message), []);
      }
      const first = addresses[0];
      if (!first) {
        const notFound = Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
        return callback(allowPrivate ? notFound : unreachableHost(hostname, 'ENOTFOUND'), []);
      }
      if (!allowPrivate) {
        const refused = addresses
          .map(({ address }) => refusedAddressReason(address))
          .find((reason) => reason !== null);
        if (refused) return callback(unreachableHost(hostname, refused), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}
