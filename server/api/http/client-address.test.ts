import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddressOf, compileProxyTrust } from './client-address';

function requestFrom(peer: string | undefined, forwardedFor?: string): IncomingMessage {
  const socket = { remoteAddress: peer };
  return {
    socket,
    connection: socket,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as IncomingMessage;
}

describe('clientAddressOf', () => {
  const none = compileProxyTrust([]);
  const local = compileProxyTrust(['127.0.0.1', '10.0.0.0/8']);

  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(clientAddressOf(requestFrom('127.0.0.1', '6.6.6.6'), none)).toBe('127.0.0.1');
    expect(clientAddressOf(requestFrom('203.0.113.9', '6.6.6.6, 7.7.7.7'), none)).toBe('203.0.113.9');
  });

  it('behind trusted proxies, is the right-most hop that is not one of them', () => {
    expect(clientAddressOf(requestFrom('127.0.0.1', '203.0.113.5'), local)).toBe('203.0.113.5');
    expect(clientAddressOf(requestFrom('127.0.0.1', '6.6.6.6, 203.0.113.5, 10.1.2.3'), local)).toBe(
      '203.0.113.5',
    );
    // A peer that is not a trusted proxy is the client, even if it sends the header.
    expect(clientAddressOf(requestFrom('198.51.100.1', '203.0.113.5'), local)).toBe('198.51.100.1');
    // Every hop trusted: the left-most one is as far as the chain goes.
    expect(clientAddressOf(requestFrom('127.0.0.1', '10.0.0.1'), local)).toBe('10.0.0.1');
  });

  it('writes a dual-stack socket’s IPv4-mapped peer as IPv4, and survives garbage', () => {
    expect(clientAddressOf(requestFrom('::ffff:192.0.2.7'), none)).toBe('192.0.2.7');
    expect(clientAddressOf(requestFrom('127.0.0.1', 'not an address'), local)).toBe('unknown');
    expect(clientAddressOf(requestFrom(undefined), none)).toBe('unknown');
  });

  it('refuses a TRUSTED_PROXIES entry that is not an address or range', () => {
    expect(() => compileProxyTrust(['10.0.0.0/33'])).toThrow();
    expect(() => compileProxyTrust(['proxy.internal'])).toThrow();
  });
});
