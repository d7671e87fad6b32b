ALTER TABLE "oidc_flows" ADD COLUMN "browser_binding_hash" text;--> statement-breakpoint
ALTER TABLE "oidc_flows" ADD COLUMN "bound_at" timestamp with time zone;