-- Idempotency records name the case they created, so that the case's redaction erases them.
UPDATE "idempotency_keys"
   SET "case_id" = ("response_body"->>'id')::uuid
 WHERE "operation" = 'cases.create'
   AND "response_body"->>'id' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
--> statement-breakpoint
-- Request hashes were unkeyed SHA-256, from which a body's few unknowns (a custom answer) could be
-- guessed. They cannot be keyed now (the requests are gone), so they go. A hash serves only the
-- 24-hour replay window (an older key answers IDEMPOTENCY_KEY_EXPIRED whatever the body); a record
-- within it and without a hash replays its answer to any request with its key.
UPDATE "idempotency_keys" SET "request_hash" = NULL WHERE "request_hash" IS NOT NULL;
--> statement-breakpoint
-- The Stripe Identity sessions of cases not yet redacted were kept only in the step's settings,
-- which redaction erases: recorded as vendor copies, so that their redaction erases them at Stripe.
INSERT INTO "vendor_copies" ("case_id", "kind", "vendor_id")
SELECT s."case_id", 'stripe.identity.verification_session', s."settings"->>'provider_session_id'
  FROM "case_steps" s
 WHERE s."method" = 'government_id' AND s."settings"->>'provider_session_id' IS NOT NULL
ON CONFLICT DO NOTHING;
