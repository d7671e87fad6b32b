import type { Env } from '@/server/platform/env';
import type { IdentityProvider } from './identity-provider';
import { createSimulatedIdentityProvider } from './simulated-identity-provider';
import { createStripeIdentityProvider } from './stripe-identity-provider';

/** The provider the operator chose (IDENTITY_PROVIDER); Stripe's settings are checked here, once. */
export function identityProviderFromEnv(config: Env): IdentityProvider {
  if (config.IDENTITY_PROVIDER === 'simulated') return createSimulatedIdentityProvider();
  if (!config.STRIPE_SECRET_KEY || !config.STRIPE_WEBHOOK_SECRET) {
    throw new Error('IDENTITY_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  }
  return createStripeIdentityProvider({
    secretKey: config.STRIPE_SECRET_KEY,
    webhookSecret: config.STRIPE_WEBHOOK_SECRET,
    apiBase: config.STRIPE_API_BASE,
  });
}
