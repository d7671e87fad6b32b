import Stripe from 'stripe';
import { type VendorErasure, VendorError } from '@/server/platform/providers/vendor-copy';
import type { IdentityResult, RedirectIdentityProvider } from './identity-provider';

export interface StripeIdentityConfig {
  secretKey: string;
  webhookSecret: string;
  /** https://api.stripe.com, or a local stand-in that speaks the same API. */
  apiBase: string;
}

/**
 * Stripe Identity through the official SDK: a VerificationSession of type `document` with a
 * matching selfie; the subject completes it on Stripe's page and returns to `return_url`; the
 * result comes from Stripe's signed webhook or from retrieving the session. Stripe keeps the images;
 * Vouch never receives them.
 */
export function createStripeIdentityProvider(config: StripeIdentityConfig): RedirectIdentityProvider {
  const api = new URL(config.apiBase);
  const stripe = new Stripe(config.secretKey, {
    host: api.hostname,
    port: api.port || (api.protocol === 'http:' ? 80 : 443),
    protocol: api.protocol === 'http:' ? 'http' : 'https',
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
  });

  return {
    kind: 'redirect',

    async startSession({ caseId, publicId, returnUrl, existingSessionId }) {
      if (existingSessionId) {
        // A session the subject left half-way is resumed rather than opened twice.
        const existing = await stripe.identity.verificationSessions.retrieve(existingSessionId);
        if (existing.status === 'requires_input' && existing.url)
          return { sessionId: existing.id, url: existing.url };
      }
      const session = await stripe.identity.verificationSessions.create({
        type: 'document',
        options: { document: { require_matching_selfie: true, require_live_capture: true } },
        return_url: returnUrl,
        client_reference_id: caseId,
        metadata: { case_id: caseId, public_id: publicId },
      });
      if (!session.url) throw new Error(`Stripe returned session ${session.id} without a url`);
      return { sessionId: session.id, url: session.url };
    },

    async fetchResult(sessionId) {
      const session = await stripe.identity.verificationSessions.retrieve(sessionId, {
        expand: ['verified_outputs'],
      });
      return toResult(session);
    },

    parseWebhook(rawBody, signature) {
      const event = stripe.webhooks.constructEvent(rawBody, signature, config.webhookSecret);
      if (!event.type.startsWith('identity.verification_session.')) return null;
      const session = event.data.object as Stripe.Identity.VerificationSession;
      const caseId = session.metadata?.case_id;
      return caseId ? { sessionId: session.id, caseId } : null;
    },

    copies: {
      kind: 'stripe.identity.verification_session',
      /**
       * Stripe's redaction (POST …/verification_sessions/{id}/redact) erases the session, its
       * reports and files; it runs for up to four days, during which the session's
       * `redaction.status` is `processing`, then `redacted`. A session still `processing` the
       * subject's attempt cannot be redacted yet: Stripe refuses, and the erasure is tried later.
       */
      async erase(sessionId): Promise<VendorErasure> {
        try {
          const session = await stripe.identity.verificationSessions.retrieve(sessionId);
          const status =
            session.redaction?.status ??
            (await stripe.identity.verificationSessions.redact(sessionId)).redaction?.status;
          return status === 'redacted' ? 'erased' : 'in_progress';
        } catch (error) {
          if (error instanceof Stripe.errors.StripeError) {
            if (error.statusCode === 404 && error.code === 'resource_missing') return 'absent';
            // Only its type and code: Stripe's message may quote the request.
            if (error.statusCode === undefined)
              throw new VendorError(`Stripe could not be reached (${error.type})`);
            const kind = [error.rawType ?? error.type, error.code].filter(Boolean).join(', ');
            throw new VendorError(`Stripe answered ${error.statusCode} (${kind})`);
          }
          throw error;
        }
      },
    },
  };
}

/**
 * `verified` passes. `requires_input` with a document or selfie error is a rejection (Stripe's
 * error codes say which); without one, or with an error about the attempt itself (consent
 * declined, unsupported device), the subject may still try again, so it stays pending.
 */
export function toResult(session: Stripe.Identity.VerificationSession): IdentityResult {
  const report = session.last_verification_report;
  const reportId = typeof report === 'string' ? report : (report?.id ?? null);
  if (session.status === 'verified') {
    const outputs = session.verified_outputs;
    const name = [outputs?.first_name, outputs?.last_name].filter(Boolean).join(' ').trim();
    const names =
      outputs?.first_name && outputs?.last_name
        ? { given: outputs.first_name, family: outputs.last_name }
        : null;
    return { outcome: 'verified', name: name || null, names, reportId };
  }
  const code = session.last_error?.code ?? null;
  if (session.status === 'requires_input' && code) {
    if (code.startsWith('selfie_')) return { outcome: 'rejected', part: 'face', detail: code, reportId };
    if (code.startsWith('document_') || code === 'under_supported_age') {
      return { outcome: 'rejected', part: 'document', detail: code, reportId };
    }
  }
  return { outcome: 'pending' };
}
