CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_jwe" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone,
	CONSTRAINT "signing_keys_alg_check" CHECK ("signing_keys"."alg" in ('EdDSA', 'RS256'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "signing_keys_one_current_per_alg" ON "signing_keys" USING btree ("alg") WHERE "signing_keys"."retired_at" is null;