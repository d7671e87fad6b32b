CREATE TABLE "oidc_flows" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"team_id" uuid NOT NULL,
	"request" jsonb NOT NULL,
	"request_expires_at" timestamp with time zone NOT NULL,
	"authorized_at" timestamp with time zone,
	"case_id" uuid,
	"code_hash" text,
	"code_expires_at" timestamp with time zone,
	"code_used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "external_ref" text;--> statement-breakpoint
ALTER TABLE "oidc_flows" ADD CONSTRAINT "oidc_flows_client_id_oidc_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."oidc_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_flows" ADD CONSTRAINT "oidc_flows_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_flows" ADD CONSTRAINT "oidc_flows_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oidc_flows_code_idx" ON "oidc_flows" USING btree ("code_hash");--> statement-breakpoint
CREATE INDEX "oidc_flows_case_idx" ON "oidc_flows" USING btree ("case_id");