import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders, newSigningSecret } from '@/server/webhooks/signature';

/** The guide's code blocks of one language, in order. */
function codeBlocks(guide: string, language: string): string[] {
  const text = readFileSync(path.join(process.cwd(), 'docs', 'guides', guide), 'utf8');
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] ?? '');
}

describe('the webhook guide', () => {
  it('its node:crypto verifier accepts a real delivery and refuses a tampered, a stale or a foreign one', async () => {
    const snippet = codeBlocks('2-webhooks.md', 'js').find((code) => code.includes('verifyVouchWebhook'));
    expect(snippet).toBeDefined();
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'vouch-guide-')), 'verify.mjs');
    writeFileSync(file, snippet ?? '');
    const { verifyVouchWebhook } = (await import(pathToFileURL(file).href)) as {
      verifyVouchWebhook: (secret: string, headers: Record<string, string>, body: string) => boolean;
    };

    const secret = newSigningSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'ping', data: { message: 'ping' } });
    const signed = (at: Date, key = secret) =>
      Object.fromEntries(
        Object.entries(
          deliveryHeaders({ secret: key, body, eventType: 'ping', deliveryId: 'dlv_1', now: at }),
        ).map(([name, value]) => [name.toLowerCase(), value]),
      );
    const now = new Date();
    expect(verifyVouchWebhook(secret, signed(now), body)).toBe(true);
    expect(verifyVouchWebhook(secret, signed(now), `${body} `)).toBe(false);
    expect(verifyVouchWebhook(secret, signed(new Date(now.getTime() - 600_000)), body)).toBe(false);
    expect(verifyVouchWebhook(secret, signed(now, newSigningSecret()), body)).toBe(false);
    // During a rotation the header may carry several signatures: any valid one is enough.
    const headers = signed(now);
    headers['webhook-signature'] = `v1,AAAA ${headers['webhook-signature']}`;
    expect(verifyVouchWebhook(secret, headers, body)).toBe(true);
  });
});
