import { lookup as dnsLookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import {
  guardedLookup,
  RefusedDestinationError,
  type ResolveAll,
  refusedAddressReason,
  UNREACHABLE_HOST_MESSAGE,
} from './destination-guard';

/** A dotted quad, or two or more colon-separated hex groups (any IPv6 form, `::` included). */
const DOTTED_QUAD = /\d{1,3}(?:\.\d{1,3}){3}/;
const IPV6_LIKE = /(?:[0-9a-f]{0,4}:){2,}[0-9a-f]{0,4}/i;

function expectNoAddress(text: string | null | undefined) {
  expect(text).toBeTruthy();
  expect(text).not.toMatch(DOTTED_QUAD);
  expect(text).not.toMatch(IPV6_LIKE);
}

/** The host a URL's parser hands on, brackets removed: `[::127.0.0.1]` becomes `::7f00:1`. */
const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

describe('refusedAddressReason', () => {
  const refused = [
    // IPv4
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '100.100.100.200',
    '168.63.129.16',
    '0.0.0.0',
    '0.1.2.3',
    '255.255.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '192.0.0.192',
    '192.0.2.1',
    '198.18.0.1',
    // IPv6
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fd00:ec2::254',
    'fe80::1',
    'fec0::1',
    'ff02::1',
    'ff00::',
    '2001:db8::1',
    '100::1',
    '4000::1',
    // IPv4-mapped, judged by the IPv4 address (dotted and hex forms)
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    // IPv4-compatible ::/96 (deprecated): `[::127.0.0.1]` in a URL becomes `::7f00:1`
    hostOf('https://[::127.0.0.1]/'),
    '::127.0.0.1',
    '::a9fe:a9fe',
    '::8.8.8.8',
    // SIIT (rfc6145) ::ffff:0:a.b.c.d
    '::ffff:0:7f00:1',
    '::ffff:0:8.8.8.8',
    // NAT64: well-known 64:ff9b::/96 and local-use 64:ff9b:1::/48
    '64:ff9b::7f00:1',
    '64:ff9b::192.168.0.1',
    '64:ff9b::808:808',
    '64:ff9b:1::7f00:1',
    '64:ff9b:1::808:808',
    // 6to4 2002::/16
    '2002:7f00:1::',
    '2002:808:808::1',
    // Teredo 2001::/32
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:0:7f00:1::',
    // not an address at all
    'not-an-ip',
    'localhost',
  ];
  it.each(refused)('refuses %s, with a reason that names no address', (address) => {
    const reason = refusedAddressReason(address);
    expect(reason).not.toBeNull();
    expectNoAddress(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82b::200e',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
  ])('allows the public address %s', (address) => {
    expect(refusedAddressReason(address)).toBeNull();
  });

  it.each([
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['::7f00:1', 'ipv4Compatible'],
    // ipaddr.js alone would read the dotted form as IPv4-mapped (and allow ::8.8.8.8).
    ['::127.0.0.1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['::ffff:0:8.8.8.8', 'rfc6145'],
    ['fe80::1%eth0', 'linkLocal'],
    ['168.63.129.16', 'metadata'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['64:ff9b::8.8.8.8', 'rfc6052'],
    ['64:ff9b:1::7f00:1', 'rfc6052'],
    ['2002:808:808::1', '6to4'],
    ['2001::1', 'teredo'],
    ['4000::1', 'notGlobalUnicast'],
  ])('classifies the embedded-IPv4 and other special form %s as %s', (address, reason) => {
    expect(refusedAddressReason(address)).toBe(reason);
  });
});

describe('guardedLookup', () => {
  const lookup = (allowPrivate: boolean, host: string) =>
    new Promise<{ error: Error | null; address: unknown }>((resolve) => {
      guardedLookup(allowPrivate)(host, { all: true }, (error, address) => resolve({ error, address }));
    });

  it('refuses a name that resolves to loopback, before any connection, without naming the address', async () => {
    const { error, address } = await lookup(false, 'localhost');
    expect(error).toBeInstanceOf(RefusedDestinationError);
    expect(error?.message).toBe(UNREACHABLE_HOST_MESSAGE);
    expect(error?.message).toMatch(
      /^could not reach a public address .* run `npm run listen -- --forward-to/,
    );
    expectNoAddress(error?.message);
    expect(address).toEqual([]);
  });

  /** A resolver that answers every question with `error`, as dns.lookup does. */
  const failingResolver =
    (code: string): ResolveAll =>
    (hostname, _options, callback) =>
      callback(Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code, hostname }), []);
  const answering =
    (...addresses: string[]): ResolveAll =>
    (_hostname, _options, callback) =>
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
  const errorOf = (resolver: ResolveAll, host: string, all: boolean) =>
    new Promise<Error | null>((resolve) => {
      guardedLookup(false, resolver)(host, { all }, (error) => resolve(error));
    });

  it.each([true, false])(
    'fails a name that does not resolve exactly as one that resolves privately (all: %s)',
    async (all) => {
      const outcomes = await Promise.all([
        errorOf(answering('10.0.0.7'), 'billing.internal', all),
        errorOf(answering('127.0.0.1', '::1'), 'admin.internal', all),
        errorOf(failingResolver('ENOTFOUND'), 'nothing.internal', all),
        errorOf(failingResolver('EAI_AGAIN'), 'slow.internal', all),
        errorOf(failingResolver('ENODATA'), 'v6only.internal', all),
        errorOf(answering(), 'empty.internal', all),
      ]);
      for (const error of outcomes) {
        expect(error).toBeInstanceOf(RefusedDestinationError);
        // Nothing but the message and the class: no code, no host name, no address.
        expect(error?.message).toBe(UNREACHABLE_HOST_MESSAGE);
        expect(Object.keys(error ?? {})).toEqual([]);
      }
    },
  );

  it("passes the resolver's own error on when private networks are allowed", async () => {
    const error = await new Promise<Error | null>((resolve) => {
      guardedLookup(true, failingResolver('ENOTFOUND'))('nothing.test', { all: true }, (error) =>
        resolve(error),
      );
    });
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });

  /** A DNS server that rebinds: each question gets the next answer, then loopback for ever. */
  function rebindingResolver(...answers: string[][]) {
    let asked = 0;
    const resolver: ResolveAll = (_hostname, _options, callback) => {
      const answer = answers[asked] ?? ['127.0.0.1'];
      asked += 1;
      callback(
        null,
        answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    };
    return { resolver, asked: () => asked };
  }

  it.each([true, false])(
    'asks once and connects to what it checked, though the name then rebinds to loopback (all: %s)',
    async (all) => {
      const dns = rebindingResolver(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
      const { error, address, family } = await new Promise<{
        error: Error | null;
        address: unknown;
        family?: number;
      }>((resolve) => {
        guardedLookup(false, dns.resolver)('hooks.example.com', { all }, (error, address, family) =>
          resolve({ error, address, family }),
        );
      });
      expect(error).toBeNull();
      expect(dns.asked()).toBe(1);
      if (all) {
        expect(address).toEqual([
          { address: '93.184.215.14', family: 4 },
          { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
        ]);
      } else {
        expect([address, family]).toEqual(['93.184.215.14', 4]);
      }
    },
  );

  it('refuses the whole answer when one of its addresses is not public', async () => {
    const dns = rebindingResolver(['93.184.215.14', '10.0.0.7']);
    const error = await new Promise<Error | null>((resolve) => {
      guardedLookup(false, dns.resolver)('hooks.example.com', { all: true }, (error) => resolve(error));
    });
    expect(error).toBeInstanceOf(RefusedDestinationError);
    expectNoAddress(error?.message);
  });

  it('hands over exactly the checked addresses when private networks are allowed', async () => {
    const { error, address } = await lookup(true, 'localhost');
    expect(error).toBeNull();
    const resolved = await dnsLookup('localhost', { all: true });
    expect(resolved.length).toBeGreaterThan(0);
    expect(address).toEqual(resolved);
  });
});
