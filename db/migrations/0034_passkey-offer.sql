ALTER TABLE "cases" ADD COLUMN "offer_passkey" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "passkey_offer_declined_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "verification_templates" ADD COLUMN "offer_passkey" boolean DEFAULT false NOT NULL;