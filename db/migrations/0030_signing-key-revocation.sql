ALTER TABLE "signing_keys" ADD COLUMN "revoked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "signing_keys" ADD COLUMN "revocation_reason" text;