import { describe, expect, it } from 'vitest';
import { postWebhook } from './post-webhook';

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
    expect(result.error).toBe('destination refused: the URL names a non-public address');
  });
});
