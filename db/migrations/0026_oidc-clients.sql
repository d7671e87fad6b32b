CREATE TABLE "oidc_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"livemode" boolean DEFAULT false NOT NULL,
	"name" text NOT NULL,
	"redirect_uris" jsonb NOT NULL,
	"default_template_id" uuid,
	"secret_hash" text NOT NULL,
	"secret_hint" text NOT NULL,
	"previous_secret_hash" text,
	"previous_secret_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD CONSTRAINT "oidc_clients_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD CONSTRAINT "oidc_clients_default_template_id_verification_templates_id_fk" FOREIGN KEY ("default_template_id") REFERENCES "public"."verification_templates"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oidc_clients_team_idx" ON "oidc_clients" USING btree ("team_id");