CREATE TABLE "vendor_copies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"case_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"vendor_id" text NOT NULL,
	"erasure_requested_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vendor_copies_kind_vendor_id_unique" UNIQUE("kind","vendor_id"),
	CONSTRAINT "vendor_copies_kind_check" CHECK ("vendor_copies"."kind" in ('stripe.identity.verification_session', 'twilio.message'))
);
--> statement-breakpoint
CREATE TABLE "team_secrets" (
	"team_id" uuid PRIMARY KEY NOT NULL,
	"hmac_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ALTER COLUMN "request_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "case_id" uuid;--> statement-breakpoint
ALTER TABLE "vendor_copies" ADD CONSTRAINT "vendor_copies_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_secrets" ADD CONSTRAINT "team_secrets_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "vendor_copies_case_idx" ON "vendor_copies" USING btree ("case_id");--> statement-breakpoint
CREATE INDEX "idempotency_keys_case_idx" ON "idempotency_keys" USING btree ("case_id") WHERE "idempotency_keys"."case_id" is not null;