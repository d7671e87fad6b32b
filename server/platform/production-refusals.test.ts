import { describe, expect, it } from 'vitest';
import { parseEnv } from './env';
import { productionRefusals } from './production-refusals';

/** Production with every stand-in replaced and its own database: nothing to refuse. */
const READY = {
  VOUCH_ENV: 'production',
  DATABASE_URL: 'postgres://vouch:secret@db.internal:5432/vouch',
  SMTP_URL: 'smtp://mail.internal:587',
  SMS_PROVIDER: 'twilio',
  IDENTITY_PROVIDER: 'stripe',
  KEYS_SECRET: 'a-signing-key-secret-of-at-least-32-characters',
};

const refusals = (overrides: Record<string, string>) =>
  productionRefusals(parseEnv({ NODE_ENV: 'production', ...READY, ...overrides }));

describe('productionRefusals', () => {
  it('refuses nothing in a production configuration, and nothing at all in development', () => {
    expect(refusals({})).toEqual([]);
    expect(
      refusals({
        VOUCH_ENV: 'development',
        DATABASE_URL: '',
        SMTP_URL: '',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        TWILIO_API_BASE: 'http://127.0.0.1:1',
      }),
    ).toEqual([]);
  });

  it.each([
    ['DATABASE_URL', { DATABASE_URL: '' }],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' }],
    ['TWILIO_API_BASE', { TWILIO_API_BASE: 'http://api.twilio.com' }],
    ['STRIPE_API_BASE', { STRIPE_API_BASE: 'http://operator:hunter2-secret@127.0.0.1:12111' }],
    ['SMTP_URL', { SMTP_URL: '' }],
    ['SMS_PROVIDER', { SMS_PROVIDER: 'dev' }],
    ['IDENTITY_PROVIDER', { IDENTITY_PROVIDER: 'simulated' }],
    ['DEFAULT_LOCALE', { DEFAULT_LOCALE: 'en-XA' }],
    ['KEYS_SECRET', { KEYS_SECRET: '' }],
  ])('refuses %s in one sentence naming it', (setting, overrides) => {
    const found = refusals(overrides);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(setting);
  });

  it('names no credentials a vendor base carries', () => {
    const [refusal] = refusals({ STRIPE_API_BASE: 'http://operator:hunter2-secret@127.0.0.1:12111' });
    expect(refusal).not.toContain('hunter2-secret');
  });
});
