import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { makeCertificate } from '@/test/support/https-receiver';
import { REFUSED_LITERAL_MESSAGE, UNREACHABLE_HOST_MESSAGE } from './destination-guard';
import { LOGGED_BODY_BYTES, postWebhook } from './post-webhook';

const post = (url: string) =>
  postWebhook({ url, body: '{}', headers: {}, timeoutMs: 2000, allowPrivateNetworks: false });

// An endpoint stored before literal addresses were refused at create, or while
// WEBHOOK_ALLOW_PRIVATE_NETWORKS was on, still reaches the attempt: it is refused there.
describe('postWebhook with a literal non-public address', () => {
  it.each([
    'https://127.0.0.1/in',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/in',
    'https://[::ffff:7f00:1]/in',
    'https://[::127.0.0.1]/in',
    'https://[64:ff9b:1::7f00:1]/in',
  ])('refuses %s before connecting, without naming the address', async (url) => {
    const result = await post(url);
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(result.error).toBe(REFUSED_LITERAL_MESSAGE);
    expect(result.error).toMatch(/^destination refused: .* run `npm run listen -- --forward-to/);
  });
});

describe('postWebhook with a host name', () => {
  it('connects only through the guard: a name that resolves to loopback is refused, the receiver never reached', async () => {
    const certificate = makeCertificate();
    setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
    let connections = 0;
    const server = createServer({ cert: certificate.cert, key: certificate.key }, (_req, res) =>
      res.end('ok'),
    );
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const result = await post(`https://localhost:${port}/hook`);
      expect(result).toMatchObject({ ok: false, status: null, error: UNREACHABLE_HOST_MESSAGE });
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('postWebhook against a slow or talkative receiver', () => {
  async function receiver(handler: Parameters<typeof createServer>[1]) {
    const certificate = makeCertificate();
    setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
    const server = createServer({ cert: certificate.cert, key: certificate.key }, handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const close = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
    const send = (timeoutMs: number) =>
      postWebhook({
        url: `https://localhost:${port}/hook`,
        body: '{}',
        headers: {},
        timeoutMs,
        allowPrivateNetworks: true,
      });
    return { send, close };
  }

  it('gives up after timeoutMs in all, before the answer and in the middle of its body', async () => {
    const silent = await receiver(() => {});
    const trickling = await receiver((req, res) => {
      req.resume();
      res.writeHead(200).write('still ');
    });
    try {
      for (const { send } of [silent, trickling]) {
        const result = await send(300);
        expect(result).toMatchObject({ ok: false, body: null, error: 'timed out after 300 ms' });
        expect(result.durationMs).toBeLessThan(2000);
      }
    } finally {
      await silent.close();
      await trickling.close();
    }
  });

  it('reads at most 64 KiB of an answer and keeps 2 KB of it', async () => {
    let written = 0;
    const endless = await receiver((req, res) => {
      req.resume();
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'a');
      const more = () => {
        while (written < 50 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
      };
      res.on('drain', more);
      more();
    });
    try {
      const result = await endless.send(5000);
      expect(result).toMatchObject({ ok: true, status: 200, error: null });
      expect(result.body).toBe('a'.repeat(LOGGED_BODY_BYTES));
      expect(written).toBeLessThan(50 * 1024 * 1024);
    } finally {
      await endless.close();
    }
  });
});

describe('postWebhook on a kept-alive connection the receiver closed', () => {
  it('sends once more on a new connection instead of failing the attempt', async () => {
    const certificate = makeCertificate();
    setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
    let requests = 0;
    let connections = 0;
    const server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
      requests += 1;
      // The second request arrives on the first connection, which the receiver drops as if its
      // idle time-out fired that very moment: no answer, the connection reset.
      if (requests === 2) return req.socket.destroy();
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    server.on('secureConnection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const send = () =>
      postWebhook({
        url: `https://localhost:${port}/hook`,
        body: '{}',
        headers: {},
        timeoutMs: 5000,
        allowPrivateNetworks: true,
      });
    try {
      expect((await send()).ok).toBe(true);
      // undici checks an idle connection for a close (one turn of the event loop) before reusing
      // it, and meanwhile opens another: waiting for that check sends the second request on the
      // kept-alive connection, which the receiver then drops as the request arrives.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await send();
      expect(second).toMatchObject({ ok: true, status: 200, error: null });
      expect(requests).toBe(3);
      expect(connections).toBe(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
    }
  });
});

describe('postWebhook with an answer PostgreSQL could not store', () => {
  it('keeps the answer as storable text: NUL and bytes that are not UTF-8 as U+FFFD, at most 2 KB', async () => {
    const certificate = makeCertificate();
    setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
    const answer = Buffer.concat([
      Buffer.from('ok\0'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('€'.repeat(1000)),
    ]);
    const server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(302, { Location: '/elsewhere' }).end(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const result = await postWebhook({
        url: `https://localhost:${port}/hook`,
        body: '{}',
        headers: {},
        timeoutMs: 5000,
        allowPrivateNetworks: true,
      });
      expect(result).toMatchObject({ ok: false, status: 302 });
      // "ok", NUL, an invalid pair and a stray byte, then as many whole "€" as fit in 2048 bytes.
      const prefix = 'ok\uFFFD\uFFFD(\uFFFD';
      const euros = Math.floor((LOGGED_BODY_BYTES - Buffer.byteLength(prefix)) / 3);
      expect(result.body).toBe(prefix + '€'.repeat(euros));
      expect(Buffer.byteLength(result.body ?? '')).toBeLessThanOrEqual(LOGGED_BODY_BYTES);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
